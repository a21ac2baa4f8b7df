#!lua flags=allow-oom
-- claim.lua: take a static member's name for the calling process (its instance), unless
-- another instance of the name is present: heartbeating, or closing.
-- KEYS[1] instances hash (streaming:mq:members:{T}:G:static), member -> "instance|until|state":
--         the instance holding the name, the server ms until which it is presumed present,
--         and its state, live (heartbeating) or closing (a graceful Close under way)
-- ARGV[1] member name
-- ARGV[2] instance id of the caller
-- ARGV[3] presence window in ms: the caller is presumed present that long from now
-- ARGV[4] lifetime of the hash in ms
-- returns {1, how} when the name is the caller's now; how is "new" (no record), "mine" (the
--         caller held it already) or "gone" (its holder was silent past its until)
--         {0, state, until, ms left, instance} when another instance holds it
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local how = 'new'
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  local inst, untilMs, state = string.match(cur, '^([^|]*)|(%d+)|(%a+)$')
  untilMs = tonumber(untilMs) or 0
  if inst == ARGV[2] then
    how = 'mine'
  elseif untilMs > now then
    return {0, state, untilMs, untilMs - now, inst}
  else
    how = 'gone'
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. '|' .. string.format('%.0f', now + tonumber(ARGV[3])) .. '|live')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {1, how}
