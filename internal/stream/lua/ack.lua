-- ack.lua: acknowledge entries of one partition, fenced by the caller's lease.
-- KEYS[1] lease key of the partition for the group (streaming:mq:lease:{T:p:I}:G)
-- KEYS[2] partition stream (stream:topic:{T:p:I})
-- ARGV[1] owner token the caller holds the lease with
-- ARGV[2] consumer group
-- ARGV[3..] stream ids to acknowledge
-- returns the number of entries acknowledged, or -1 when the caller no longer holds the lease
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return -1
end
return redis.call('XACK', KEYS[2], ARGV[2], unpack(ARGV, 3))
