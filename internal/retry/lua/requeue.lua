#!lua flags=allow-oom
-- requeue.lua: append a retry of an entry to its partition and ack the original, atomically;
-- record the retry in the group's retry index and count (for lag, see internal/lag).
-- KEYS[1] lease key of the partition for the group (fence)
-- KEYS[2] partition stream
-- KEYS[3] retry index of the group beside the stream (keys.RetryIndex: zset of padded ids)
-- KEYS[4] retry counts beside the stream (keys.RetryCount: group -> retries appended)
-- ARGV[1] owner token
-- ARGV[2] consumer group
-- ARGV[3] id of the entry being retried
-- ARGV[4..] field, value pairs of the retry entry
-- returns {new entry id, 1 when the group held the original (the XACK acked it) else 0}, or
-- -1 when the caller no longer holds the lease or the stream is gone
-- A stream deleted under its lease holder (a forced DeleteTopic, FLUSHALL) is not written
-- back: the caller has lost the partition as if its lease had gone.
if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('EXISTS', KEYS[2]) == 0 then
  return -1
end
local function pad(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return string.rep('0', 20 - #ms) .. ms .. '-' .. string.rep('0', 20 - #seq) .. seq
end
local id = redis.call('XADD', KEYS[2], '*', unpack(ARGV, 4))
redis.call('ZADD', KEYS[3], 0, pad(id))
redis.call('HINCRBY', KEYS[4], ARGV[2], 1)
local first = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)[1]
redis.call('ZREMRANGEBYLEX', KEYS[3], '-', '(' .. pad(first[1]))
return {id, redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])}
