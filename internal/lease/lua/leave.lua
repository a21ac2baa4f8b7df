-- leave.lua: remove a member from a group's membership at once (graceful leave).
-- KEYS[1] membership zset (streaming:mq:members:{T}:G)
-- KEYS[2] capabilities hash beside it
-- ARGV[1] member name
-- returns 1 when the member was present, 0 otherwise
redis.call('HDEL', KEYS[2], ARGV[1])
return redis.call('ZREM', KEYS[1], ARGV[1])
