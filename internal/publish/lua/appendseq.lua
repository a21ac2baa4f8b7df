#!lua
-- appendseq.lua: append messages to partitions, each at most once per producer and sequence
-- number (the Publisher's default idempotent append), a payload in its own key when it is
-- offloaded. A producer (one flusher of one Publisher) numbers its messages to each partition
-- 1, 2, 3, ... and sends them in that order. Its record (one key per producer and group of
-- partitions of a topic: 64 partitions on a single server, one on a Cluster) holds for each
-- partition it appended to the highest number appended and the gaps below it: numbers a
-- failed send skipped, which a send of the same message again fills. A number at or below the
-- highest that is in no gap was appended.
-- The messages come in runs: consecutive numbers of one producer to one partition, all inline
-- or all offloaded, with the same number of fields. The caller says what it believes each
-- record holds and what the record holds once the call's new runs (numbers it gave just now)
-- are appended. When the record holds what the caller believes (the usual case: one GET and a
-- string compare, no parsing), its new runs are appended without a check and the record is
-- written as the caller said. Else (the caller did not know; or the call runs again, as a
-- client sends a command again whose reply it lost: the record then holds what the first run
-- wrote) the record is parsed and every message checked, as are runs sent again.
-- A record reads "I:last a-b c-d,J:last": per partition (I, its index) the highest number
-- appended and up to maxGaps gaps (both ends in, ascending).
-- One call covers one partition on a Cluster (all its keys in the partition's slot) and the
-- partitions of a pipeline on a single server.
-- KEYS, per section (one partition): its stream (stream:topic:{T:p:I}), then, when the section
--   has offloaded messages, its payload index zset ("id|ref" -> entry ms) and the payload keys
--   (streaming:mq:payload:{T:p:I}:REF) of its offloaded messages in their order; after the
--   sections, the R records of the call (streaming:mq:producer:{T:p:G}:ID, G the group's
--   first partition)
-- ARGV[1] record TTL ms (the idempotency window: an idle producer is forgotten)
-- ARGV[2] payload TTL ms (0: none)
-- ARGV[3] S, the number of sections; ARGV[4] R, the number of records
-- ARGV[5..7] the names of the three fields of the default layout (uuid, metadata, payload)
-- ARGV[8..], per record: what the caller believes it holds ("" when it does not know, "~"
--   when it believes there is none), what it holds after the call's new runs
-- then per section: its runs, 1 when it has offloaded messages else 0; per run: its kind
--   ("n" new, "a" sent again), its record (1..R), its partition's name in the record, its
--   first number, k (its messages), f (field and value arguments per entry; -1: the default
--   layout, its three values only), 1 when offloaded else 0; then per message, for an
--   offloaded run its payload ref and bytes, then its f arguments (or three values)
-- returns per message the stream id, "" for a duplicate; then per record "" when it holds
-- what the caller said, else "=" and what it holds ("=" alone: there is none). A refused XADD
-- (a key of another type) ends the call with its error once the records hold the numbers appended so far: every
-- message of the call is then reported failed, and sending them again appends only those
-- that were not appended.
local maxGaps = 16
local ttl, pttl = ARGV[1], tonumber(ARGV[2])
local S, R = tonumber(ARGV[3]), tonumber(ARGV[4])
local n1, n2, n3 = ARGV[5], ARGV[6], ARGV[7]
local recKeys = #KEYS - R -- record r is KEYS[recKeys + r]

local out, no = {}, 0 -- the reply so far, and its length
local i, kc = 8 + 2 * R, 1 -- the next argument and key
local parsed = {} -- record -> {order = {names}, by = {name -> {last, gaps}}}, once read
local known = {} -- record -> true when it holds what the caller believes
local done = {} -- the new runs appended without a check: {record, name, first, count}

-- parse reads a record: no entries when it does not exist.
local function parse(v)
  local rec = {order = {}, by = {}}
  if not v then
    return rec
  end
  for entry in string.gmatch(v, '[^,]+') do
    local name, rest = string.match(entry, '^([^:]+):(.*)$')
    local st = {gaps = {}}
    for tok in string.gmatch(rest, '%S+') do
      if st.last == nil then
        st.last = tonumber(tok)
      else
        local a, b = string.match(tok, '^(%d+)-(%d+)$')
        st.gaps[#st.gaps + 1] = {tonumber(a), tonumber(b)}
      end
    end
    rec.order[#rec.order + 1] = name
    rec.by[name] = st
  end
  return rec
end

-- entry is partition name's state in rec, made when it has none (an unknown producer there).
local function entry(rec, name)
  local st = rec.by[name]
  if not st then
    st = {gaps = {}}
    rec.by[name] = st
    rec.order[#rec.order + 1] = name
  end
  return st
end

-- read is record r, parsed: read from Redis the first time.
local function read(r)
  local rec = parsed[r]
  if not rec then
    rec = parse(redis.call('GET', KEYS[recKeys + r]))
    parsed[r] = rec
  end
  return rec
end

-- encode writes a record back in its format.
local function encode(rec)
  local parts = {}
  for _, name in ipairs(rec.order) do
    local st = rec.by[name]
    if st.last then
      local s = name .. ':' .. string.format('%d', st.last)
      for _, g in ipairs(st.gaps) do
        s = s .. ' ' .. string.format('%d-%d', g[1], g[2])
      end
      parts[#parts + 1] = s
    end
  end
  return table.concat(parts, ',')
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
  for g, gap in ipairs(gaps) do
    if seq >= gap[1] and seq <= gap[2] then
      table.remove(gaps, g)
      if seq < gap[2] then
        table.insert(gaps, g, {seq + 1, gap[2]})
      end
      if gap[1] < seq then
        table.insert(gaps, g, {gap[1], seq - 1})
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
  for _, gap in ipairs(st.gaps) do
    if seq >= gap[1] and seq <= gap[2] then
      return true
    end
  end
  return false
end

-- record notes the numbers a..b as appended: below the highest (in a gap) one at a time, above
-- it as a range, the numbers skipped becoming a gap.
local function record(st, a, b)
  local from = (st.last or 0) + 1
  if a < from then
    for seq = a, b do
      fill(st.gaps, seq)
    end
    return
  end
  if a > from then
    st.gaps[#st.gaps + 1] = {from, a - 1}
    bound(st.gaps)
  end
  st.last = b
end

-- check compares each record the caller believes it knows with what it holds: known, or
-- parsed (the message by message path).
local function check()
  for r = 1, R do
    local believed = ARGV[6 + 2 * r]
    if believed ~= '' then
      local v = redis.call('GET', KEYS[recKeys + r])
      if v == believed or (not v and believed == '~') then
        known[r] = true
      else
        parsed[r] = parse(v)
      end
    end
  end
end

-- save writes the records and returns what each holds for the caller. fast: every new run
-- was appended whole, so a known record holds what the caller said.
local function save(fast)
  local res = {}
  for r = 1, R do
    local key, rec = KEYS[recKeys + r], parsed[r]
    if not rec and known[r] and fast then
      redis.call('SET', key, ARGV[7 + 2 * r], 'PX', ttl)
      res[r] = ''
    elseif not rec then
      rec = read(r)
    end
    if rec then
      for _, d in ipairs(done) do
        if d[1] == r then
          local first = tonumber(d[3])
          record(entry(rec, d[2]), first, first + d[4] - 1)
        end
      end
      local v = encode(rec)
      if v == '' then
        redis.call('DEL', key) -- nothing appended: no record
      else
        redis.call('SET', key, v, 'PX', ttl)
      end
      res[r] = '=' .. v
    end
  end
  return res
end

-- fastRun appends a new run of k inline entries of the default layout to stream; it returns
-- how many it appended, and the error of a refused XADD.
local function fastRun(stream, k)
  for j = 1, k do
    local id = redis.pcall('XADD', stream, '*', n1, ARGV[i], n2, ARGV[i + 1], n3, ARGV[i + 2])
    if type(id) == 'table' then
      return j - 1, id
    end
    no = no + 1
    out[no] = id
    i = i + 3
  end
  return k, nil
end

-- xadd appends the entry of the f arguments from ARGV[at] to stream (f -1: the default
-- layout's three values): a redis error reply when refused.
local function xadd(stream, at, f)
  if f == -1 then
    return redis.pcall('XADD', stream, '*', n1, ARGV[at], n2, ARGV[at + 1], n3, ARGV[at + 2])
  end
  return redis.pcall('XADD', stream, '*', unpack(ARGV, at, at + f - 1))
end

-- store writes an offloaded message's payload key before its entry.
local function store(pkey, body)
  if pttl > 0 then
    redis.call('SET', pkey, body, 'PX', pttl)
  else
    redis.call('SET', pkey, body)
  end
end

-- run appends a run of k entries of f to stream: a new run whole, a run sent again each
-- message unless its number was appended (st, its partition's state in the record);
-- offloaded ones from their payload keys. It returns how many of a new run it appended, and
-- the error of a refused XADD.
local function run(stream, index, st, first, k, f, off)
  local w = f == -1 and 3 or f
  for seq = first, first + k - 1 do
    local pkey, ref
    if off then
      pkey, ref = KEYS[kc], ARGV[i]
      kc, i = kc + 1, i + 2
    end
    local id = ''
    if not st or admits(st, seq) then
      if pkey then
        store(pkey, ARGV[i - 1])
      end
      id = xadd(stream, i, f)
      if type(id) == 'table' then
        if pkey then
          redis.call('DEL', pkey)
        end
        return seq - first, id
      end
      if pkey then
        redis.call('ZADD', index, tonumber(string.match(id, '^(%d+)-')), id .. '|' .. ref)
      end
      if st then
        record(st, seq, seq)
      end
    end
    no = no + 1
    out[no] = id
    i = i + w
  end
  return k, nil
end

check()
for _ = 1, S do
  local stream, index = KEYS[kc], nil
  local runs = tonumber(ARGV[i])
  kc = kc + 1
  if ARGV[i + 1] == '1' then
    index, kc = KEYS[kc], kc + 1
  end
  i = i + 2
  for _ = 1, runs do
    local kind, r, name, first = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3]
    local k, f, off = tonumber(ARGV[i + 4]), tonumber(ARGV[i + 5]), ARGV[i + 6] == '1'
    i = i + 7
    local n, err
    local unchecked = kind == 'n' and known[r]
    if unchecked and f == -1 and not off then
      n, err = fastRun(stream, k)
    elseif unchecked then
      n, err = run(stream, index, nil, tonumber(first), k, f, off)
    else
      n, err = run(stream, index, entry(read(r), name), tonumber(first), k, f, off)
    end
    if unchecked and n > 0 then
      done[#done + 1] = {r, name, first, n}
    end
    if err then
      save(false)
      return err
    end
  end
end
local res = save(true)
for r = 1, R do
  out[no + r] = res[r]
end
return out
