#!lua flags=allow-oom
-- refresh.lua: a static member's process renews its presence: its record says it is there
-- for one more presence window, from now in server time.
-- KEYS[1] instances hash (streaming:mq:members:{T}:G:static), see claim.lua
-- ARGV[1] member name
-- ARGV[2] instance id of the caller
-- ARGV[3] presence window in ms: the caller is presumed present that long from now
-- ARGV[4] lifetime of the hash in ms
-- returns 1 when recorded; 2 when the caller's record reads closing (left as it is: its
--         Close said how long a successor waits for it, and the presence is not renewed);
--         0 when another instance holds the name (nothing touched)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  if string.match(cur, '^([^|]*)|') ~= ARGV[2] then
    return 0
  end
  if string.match(cur, '|(%a+)$') == 'closing' then
    return 2
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. '|' .. string.format('%.0f', now + tonumber(ARGV[3])) .. '|live')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
