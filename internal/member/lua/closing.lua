#!lua flags=allow-oom
-- closing.lua: a static member's instance starts a graceful Close: it stops heartbeating
-- while it drains, so it records how much longer a successor must wait for it.
-- KEYS[1] instances hash (streaming:mq:members:{T}:G:static), see claim.lua
-- ARGV[1] member name
-- ARGV[2] instance id of the caller
-- ARGV[3] ms from now the Close may take: the record reads "closing" until then
-- returns 1 when recorded, 0 when another instance holds the name (nothing touched)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur and string.match(cur, '^([^|]*)|') ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. '|' .. string.format('%.0f', now + tonumber(ARGV[3])) .. '|closing')
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[3]) -- the record outlives the Close
end
return 1
