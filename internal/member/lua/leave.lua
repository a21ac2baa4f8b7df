#!lua flags=allow-oom
-- leave.lua: remove a member from a group's membership at once (graceful leave), and record
-- the leave as the group's latest beat when the member was in the membership (not after a
-- forced delete removed it: nothing of a deleted group or topic is written back).
-- KEYS[1] membership zset (streaming:mq:members:{T}:G)
-- KEYS[2] capabilities hash beside it
-- KEYS[3] the topic's beats hash (streaming:mq:members:{T}), group -> its latest beat,
--         "leftMs,pid,host,left,member": kept for ARGV[4] ms
-- KEYS[4] static members only: the instances hash beside it (see claim.lua); the member's
--         record is removed too, so a successor takes the name at once
-- ARGV[1] member name
-- ARGV[2] the member's process: "pid,host"
-- ARGV[3] the group's field in KEYS[3]
-- ARGV[4] TTL of KEYS[3] in milliseconds
-- ARGV[5] static members only: the caller's instance id
-- returns 1 when the member was present, 0 otherwise; for a static member whose name another
-- instance holds, 0 and nothing touched (the membership entry is the successor's)
if KEYS[4] then
  local cur = redis.call('HGET', KEYS[4], ARGV[1])
  if cur and string.match(cur, '^([^|]*)|') ~= ARGV[5] then
    return 0
  end
  redis.call('HDEL', KEYS[4], ARGV[1])
end
redis.call('HDEL', KEYS[2], ARGV[1])
local was = redis.call('ZREM', KEYS[1], ARGV[1])
if was == 1 then
  local t = redis.call('TIME')
  local now = string.format('%.0f', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
  redis.call('HSET', KEYS[3], ARGV[3], now .. ',' .. ARGV[2] .. ',left,' .. ARGV[1])
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
end
return was
