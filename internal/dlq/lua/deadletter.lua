#!lua flags=allow-oom
-- deadletter.lua: write a dead letter to the partition's DLQ and ack the original, atomically.
-- KEYS[1] lease key of the partition for the group (fence)
-- KEYS[2] partition stream (stream:topic:{T:p:I})
-- KEYS[3] partition DLQ stream (stream:topic:{T:p:I}:dlq)
-- ARGV[1] owner token
-- ARGV[2] consumer group
-- ARGV[3] id of the entry being dead-lettered
-- ARGV[4..] field, value pairs of the DLQ entry
-- returns {DLQ entry id, 1 when the group held the entry (the XACK acked it) else 0}, or -1
-- when the caller no longer holds the lease or the stream is gone
-- A stream deleted under its lease holder (a forced DeleteTopic, FLUSHALL) is not written
-- back: the caller has lost the partition as if its lease had gone.
if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('EXISTS', KEYS[2]) == 0 then
  return -1
end
local id = redis.call('XADD', KEYS[3], '*', unpack(ARGV, 4))
return {id, redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])}
