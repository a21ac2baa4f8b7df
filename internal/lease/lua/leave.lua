#!lua flags=allow-oom
-- leave.lua: remove a member from a group's membership at once (graceful leave).
-- KEYS[1] membership zset (streaming:mq:members:{T}:G)
-- KEYS[2] capabilities hash beside it
-- KEYS[3] static members only: the instances hash beside it (see claim.lua); the member's
--         record is removed too, so a successor takes the name at once
-- ARGV[1] member name
-- ARGV[2] static members only: the caller's instance id
-- returns 1 when the member was present, 0 otherwise; for a static member whose name another
-- instance holds, 0 and nothing touched (the membership entry is the successor's)
if KEYS[3] then
  local cur = redis.call('HGET', KEYS[3], ARGV[1])
  if cur and string.match(cur, '^([^|]*)|') ~= ARGV[2] then
    return 0
  end
  redis.call('HDEL', KEYS[3], ARGV[1])
end
redis.call('HDEL', KEYS[2], ARGV[1])
return redis.call('ZREM', KEYS[1], ARGV[1])
