-- append.lua: append a message to its partition at most once per UUID within a window (the
-- Publisher's idempotent append), its payload in its own key when it is offloaded.
-- KEYS[1] partition stream (stream:topic:{T:p:I})
-- KEYS[2] UUIDs appended within the window (streaming:mq:idem:{T:p:I}): UUID -> stream id
-- KEYS[3] their append times (streaming:mq:idem:{T:p:I}:at): UUID -> ms
-- KEYS[4] payload key (streaming:mq:payload:{T:p:I}:REF), or the stream key when inline
-- KEYS[5] payload index zset of the partition ("id|ref" -> entry ms), or the stream key
-- ARGV[1] message UUID
-- ARGV[2] window ms
-- ARGV[3] payload ref ("" when inline), ARGV[4] payload bytes, ARGV[5] payload TTL ms (0: none)
-- ARGV[6..] field, value pairs of the entry
-- Each call forgets up to 16 UUIDs older than the window, more than it remembers, so the
-- keys hold about the window's appends; both expire a window after the latest append.
-- returns {stream id, 0} for an append, {stream id of the first append, 1} for a duplicate
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local window = tonumber(ARGV[2])
local old = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ms - window, 'LIMIT', 0, 16)
if #old > 0 then
  redis.call('ZREM', KEYS[3], unpack(old))
  redis.call('HDEL', KEYS[2], unpack(old))
end
local first = redis.call('HGET', KEYS[2], ARGV[1])
if first then
  return {first, 1}
end
local ref = ARGV[3]
if ref ~= '' then
  if tonumber(ARGV[5]) > 0 then
    redis.call('SET', KEYS[4], ARGV[4], 'PX', ARGV[5])
  else
    redis.call('SET', KEYS[4], ARGV[4])
  end
end
local id = redis.call('XADD', KEYS[1], '*', unpack(ARGV, 6))
if ref ~= '' then
  redis.call('ZADD', KEYS[5], tonumber(string.match(id, '^(%d+)-')), id .. '|' .. ref)
end
redis.call('HSET', KEYS[2], ARGV[1], id)
redis.call('ZADD', KEYS[3], ms, ARGV[1])
redis.call('PEXPIRE', KEYS[2], window)
redis.call('PEXPIRE', KEYS[3], window)
return {id, 0}
