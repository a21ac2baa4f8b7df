#!lua
-- appendseq.lua: append messages to one partition, each at most once per producer and
-- sequence number (the Publisher's default idempotent append), a payload in its own key when
-- it is offloaded. A producer (one flusher of one Publisher) numbers its messages to each
-- partition 1, 2, 3, ... and sends them in that order. Its key holds the highest number
-- appended and the gaps below it: numbers a failed send skipped, which a send of the same
-- message again fills. A number at or below the highest that is in no gap was appended.
-- The messages come in runs: consecutive numbers of one producer, all inline or all
-- offloaded, with the same number of fields. A run above the producer's highest number (the
-- usual case: a flusher's next messages) is appended without a check per message.
-- One call covers one partition on a Cluster (all its keys in the partition's slot) and
-- every partition of a pipeline on a single server: the keys and arguments are sections, one
-- per partition, in the same order.
-- KEYS, per partition: its stream (stream:topic:{T:p:I}), its payload index zset ("id|ref"
--   -> entry ms), its np producer keys (streaming:mq:producer:{T:p:I}:ID, "last a-b c-d
--   ...": the gaps a-b, both ends in, ascending, at most maxGaps of them), then the payload
--   keys (streaming:mq:payload:{T:p:I}:REF) of its offloaded messages, in their order
-- ARGV[1] producer key TTL ms (the idempotency window: an idle producer is forgotten)
-- ARGV[2] payload TTL ms (0: none)
-- ARGV[3] the number of partitions
-- ARGV[4..6] the names of the three fields of the default layout (uuid, metadata, payload)
-- ARGV[7..], per partition: np, the number of runs; per run: its producer (1..np), its first
--   number, k (its messages), f (field and value arguments per entry; -1: the default
--   layout, its three values only), 1 when offloaded or 0; then per message, for an
--   offloaded run its payload ref and bytes, then its f arguments (or three values)
-- returns per message the stream id, "" for a duplicate; a refused XADD (a full Redis, a
-- key of another type) ends the call with its error once the numbers appended so far are
-- saved: every message of the call is then reported failed, and sending them again appends
-- only those that were not appended.
local maxGaps = 16
local ttl, pttl, parts = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local n1, n2, n3 = ARGV[4], ARGV[5], ARGV[6]

-- load reads a producer key: nil last when the producer is unknown (new, or forgotten).
local function load(key)
  local st = {gaps = {}, changed = false}
  local v = redis.call('GET', key)
  if not v then
    return st
  end
  if not string.find(v, ' ', 1, true) then -- no gap: the usual case
    st.last = tonumber(v)
    return st
  end
  for tok in string.gmatch(v, '%S+') do
    if st.last == nil then
      st.last = tonumber(tok)
    else
      local a, b = string.match(tok, '^(%d+)-(%d+)$')
      st.gaps[#st.gaps + 1] = {tonumber(a), tonumber(b)}
    end
  end
  return st
end

-- bound merges the two lowest gaps while there are too many: the numbers between them count
-- as not appended, so a message sent again there is appended again (a duplicate, never a loss).
local function bound(gaps)
  while #gaps > maxGaps do
    gaps[2][1] = gaps[1][1]
    table.remove(gaps, 1)
  end
end

-- fill takes seq out of the gap that holds it.
local function fill(gaps, seq)
  for i, g in ipairs(gaps) do
    if seq >= g[1] and seq <= g[2] then
      table.remove(gaps, i)
      if seq < g[2] then
        table.insert(gaps, i, {seq + 1, g[2]})
      end
      if g[1] < seq then
        table.insert(gaps, i, {g[1], seq - 1})
      end
      bound(gaps)
      return
    end
  end
end

-- admits reports whether seq is to be appended: above the highest number, or in a gap.
-- Numbers below the first one of an unknown producer are a gap: they may be sends again of
-- messages it forgot.
local function admits(st, seq)
  if seq > (st.last or 0) then
    return true
  end
  for _, g in ipairs(st.gaps) do
    if seq >= g[1] and seq <= g[2] then
      return true
    end
  end
  return false
end

-- record notes the numbers a..b, which admits let through, as appended: a single number
-- in a gap, or a range above the highest.
local function record(st, a, b)
  local from = (st.last or 0) + 1
  st.changed = true
  if a < from then
    fill(st.gaps, a)
    return
  end
  if a > from then
    st.gaps[#st.gaps + 1] = {from, a - 1}
    bound(st.gaps)
  end
  st.last = b
end

local function encode(st)
  if #st.gaps == 0 then
    return st.last
  end
  local parts = {string.format('%d', st.last)}
  for _, g in ipairs(st.gaps) do
    parts[#parts + 1] = string.format('%d-%d', g[1], g[2])
  end
  return table.concat(parts, ' ')
end

-- save writes the producer keys that changed, KEYS[at..]: once per partition, at the end.
local function save(states, at)
  for p, st in ipairs(states) do
    if st.changed then
      redis.call('SET', KEYS[at + p - 1], encode(st), 'PX', ttl)
    end
  end
end

-- xadd appends the entry of the f arguments from ARGV[i] to stream (f -1: the default
-- layout's three values): a redis error reply when refused.
local function xadd(stream, i, f)
  if f == -1 then
    return redis.pcall('XADD', stream, '*', n1, ARGV[i], n2, ARGV[i + 1], n3, ARGV[i + 2])
  end
  return redis.pcall('XADD', stream, '*', unpack(ARGV, i, i + f - 1))
end

-- width is how many arguments an entry of f takes.
local function width(f)
  if f == -1 then
    return 3
  end
  return f
end

-- store writes an offloaded message's payload key before its entry.
local function store(pkey, body)
  if pttl > 0 then
    redis.call('SET', pkey, body, 'PX', pttl)
  else
    redis.call('SET', pkey, body)
  end
end

-- fastRun appends a run of k inline entries of the default layout from ARGV[i], all new,
-- to stream; it returns the next argument and the error of a refused XADD (after which the
-- caller saves what was appended).
local function fastRun(out, stream, st, first, k, i)
  local o = #out
  for j = 0, k - 1 do
    local id = redis.pcall('XADD', stream, '*', n1, ARGV[i], n2, ARGV[i + 1], n3, ARGV[i + 2])
    if type(id) == 'table' then
      if j > 0 then
        record(st, first, first + j - 1)
      end
      return i, id
    end
    out[o + j + 1] = id
    i = i + 3
  end
  record(st, first, first + k - 1)
  return i, nil
end

-- run appends a run of k entries of f from ARGV[i] to stream, each unless its number was
-- appended (fresh: none was); offloaded ones from their payload keys from KEYS[kc]. It
-- returns the next argument and payload key, and the error of a refused XADD.
local function run(out, stream, index, st, first, k, f, off, fresh, i, kc)
  local w = width(f)
  for seq = first, first + k - 1 do
    local pkey, ref
    if off then
      pkey, ref = KEYS[kc], ARGV[i]
      kc, i = kc + 1, i + 2
    end
    if fresh or admits(st, seq) then
      if pkey then
        store(pkey, ARGV[i - 1])
      end
      local id = xadd(stream, i, f)
      if type(id) == 'table' then
        if pkey then
          redis.call('DEL', pkey)
        end
        if fresh and seq > first then
          record(st, first, seq - 1)
        end
        return i, kc, id
      end
      if pkey then
        redis.call('ZADD', index, tonumber(string.match(id, '^(%d+)-')), id .. '|' .. ref)
      end
      if not fresh then
        record(st, seq, seq)
      end
      out[#out + 1] = id
    else
      out[#out + 1] = ''
    end
    i = i + w
  end
  if fresh then
    record(st, first, first + k - 1)
  end
  return i, kc, nil
end

local out, i, kc = {}, 7, 1
for _ = 1, parts do
  local stream, index, at = KEYS[kc], KEYS[kc + 1], kc + 2
  local np, runs = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
  i, kc = i + 2, at + np
  local states = {}
  for p = 1, np do
    states[p] = load(KEYS[at + p - 1])
  end
  for _ = 1, runs do
    local st = states[tonumber(ARGV[i])]
    local first, k, f, off = tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]), ARGV[i + 4] == '1'
    i = i + 5
    local fresh, err = first > (st.last or 0), nil -- above the highest: every number of the run is new
    if fresh and f == -1 and not off then
      i, err = fastRun(out, stream, st, first, k, i)
    else
      i, kc, err = run(out, stream, index, st, first, k, f, off, fresh, i, kc)
    end
    if err then
      save(states, at)
      return err
    end
  end
  save(states, at)
end
return out
