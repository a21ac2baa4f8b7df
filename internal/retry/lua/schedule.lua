#!lua flags=allow-oom
-- schedule.lua: park a retry in the group's retry set until due, and ack the original,
-- atomically.
-- KEYS[1] lease key of the partition for the group (fence)
-- KEYS[2] partition stream
-- KEYS[3] retry zset of the group (streaming:mq:retry:{T:p:I}:G): item id -> due ms
-- KEYS[4] retry items hash beside it: item id -> msgpack item
-- ARGV[1] owner token
-- ARGV[2] consumer group
-- ARGV[3] id of the entry being retried
-- ARGV[4] item id
-- ARGV[5] due time, unix ms
-- ARGV[6] msgpack item
-- returns 1 when the group held the original (the XACK acked it), 0 when not, or -1 when the
-- caller no longer holds the lease or the stream is gone
-- A stream deleted under its lease holder (a forced DeleteTopic, FLUSHALL) is not written
-- back: the caller has lost the partition as if its lease had gone.
if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('EXISTS', KEYS[2]) == 0 then
  return -1
end
redis.call('HSET', KEYS[4], ARGV[4], ARGV[6])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4])
return redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
