#!lua
-- append.lua: append messages to one partition, each at most once per UUID within a window
-- (the Publisher's idempotent append), a payload in its own key when it is offloaded.
-- The UUIDs appended are kept in hashes by time bucket of the server's clock (TIME), half a
-- window each: a call looks in the server's bucket S and the two before it, and records the
-- UUIDs it appends in S, which expires one and a half windows after it began. The caller's
-- clock is never trusted: it only names the buckets (the keys are passed, never built here),
-- from its estimate of the server's clock. When the buckets named do not hold S-2..S the call
-- writes nothing and answers the error "SKEW <server ms>": the caller sends it again with the
-- buckets of that clock.
-- KEYS[1] partition stream (stream:topic:{T:p:I})
-- KEYS[2] payload index zset of the partition ("id|ref" -> entry ms)
-- KEYS[3..2+nb] UUID buckets F, F+1, ..., F+nb-1 (streaming:mq:idem:{T:p:I}:N): UUID -> stream id
-- KEYS[3+nb..] the payload keys (streaming:mq:payload:{T:p:I}:REF) of the offloaded messages,
--              in their order
-- ARGV[1] bucket length ms (half the window)
-- ARGV[2] F, the first bucket named
-- ARGV[3] nb, the number of buckets named (at least 3)
-- ARGV[4] payload TTL ms (0: none)
-- ARGV[5] n, the number of messages
-- ARGV[6..] per message, in order: UUID, payload ref ("" when inline), payload bytes ("" when
--           inline), f, then f field, value arguments of its entry
-- A UUID found in a bucket (or earlier in this call) appends nothing. Each message's payload
-- key and index member are written after its XADD, so a refused XADD leaves none behind.
-- returns per message, flattened: the stream id, then 1 when it was a duplicate (the id is
-- the first append's) or 0; a refused XADD (a key of another type, an entry without fields)
-- ends the call with its error once the UUIDs appended so far are recorded: every message of
-- the call is then reported failed, and sending them again appends only those that were not
-- appended.
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local half, first, nb = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local ttl, n = tonumber(ARGV[4]), tonumber(ARGV[5])
local s = math.floor(ms / half)
if s - 2 < first or s > first + nb - 1 then
  return redis.error_reply(string.format(
    'SKEW %d server time (ms): the buckets named, %d to %d, do not hold %d to %d',
    ms, first, first + nb - 1, s - 2, s))
end
local bucket = KEYS[3 + s - first]

local msgs, uuids, i = {}, {}, 6
for m = 1, n do
  local f = tonumber(ARGV[i + 3])
  msgs[m] = {uuid = ARGV[i], ref = ARGV[i + 1], body = ARGV[i + 2], from = i + 4, to = i + 3 + f}
  uuids[m] = ARGV[i]
  i = i + 4 + f
end
local seen = {}
for b = s - 2, s do
  local got = redis.call('HMGET', KEYS[3 + b - first], unpack(uuids))
  for m = 1, n do
    seen[m] = seen[m] or got[m]
  end
end

-- record writes the UUIDs appended, ids (UUID, id pairs), into the server's bucket.
local function record(ids)
  if #ids > 0 then
    redis.call('HSET', bucket, unpack(ids))
    redis.call('PEXPIREAT', bucket, (s + 3) * half)
  end
end

-- store writes an appended message's payload key and its index member.
local function store(pkey, msg, id)
  if ttl > 0 then
    redis.call('SET', pkey, msg.body, 'PX', ttl)
  else
    redis.call('SET', pkey, msg.body)
  end
  redis.call('ZADD', KEYS[2], tonumber(string.match(id, '^(%d+)-')), id .. '|' .. msg.ref)
end

local out, ids, here, pk = {}, {}, {}, 3 + nb
for m = 1, n do
  local msg = msgs[m]
  local pkey = nil
  if msg.ref ~= '' then
    pkey, pk = KEYS[pk], pk + 1
  end
  local prev = seen[m] or here[msg.uuid]
  if prev then
    out[#out + 1], out[#out + 2] = prev, 1
  else
    local id = redis.pcall('XADD', KEYS[1], '*', unpack(ARGV, msg.from, msg.to))
    if type(id) == 'table' then
      record(ids)
      return id
    end
    if pkey then
      store(pkey, msg, id)
    end
    here[msg.uuid] = id
    ids[#ids + 1], ids[#ids + 2] = msg.uuid, id
    out[#out + 1], out[#out + 2] = id, 0
  end
end
record(ids)
return out
