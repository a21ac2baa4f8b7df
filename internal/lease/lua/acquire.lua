#!lua flags=allow-oom
-- acquire.lua: take a partition lease, or extend it when the caller already holds it.
-- KEYS[1] lease key (streaming:mq:lease:{T:p:I}:G)
-- ARGV[1] owner token
-- ARGV[2] TTL in milliseconds
-- returns 1 when the caller holds the lease afterwards, 0 when another owner holds it
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if cur then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
