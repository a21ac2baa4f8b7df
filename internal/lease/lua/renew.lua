#!lua flags=allow-oom
-- renew.lua: extend a lease only when the caller's token still owns it.
-- KEYS[1] lease key (streaming:mq:lease:{T:p:I}:G)
-- ARGV[1] owner token
-- ARGV[2] TTL in milliseconds
-- returns 1 when renewed, 0 when the lease is gone or owned by someone else
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
