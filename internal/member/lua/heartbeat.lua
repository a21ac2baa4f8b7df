#!lua flags=allow-oom
-- heartbeat.lua: record a member as alive, drop expired members, return the live ones.
-- KEYS[1] membership zset (streaming:mq:members:{T}:G), member -> expiry in server ms
-- KEYS[2] capabilities hash beside it, member -> "modulo,remainder,maxLeased,pid,host,sentMs"
-- KEYS[3] the topic's beats hash (streaming:mq:members:{T}), group -> its latest beat,
--         "sentMs,pid,host,beat,member": kept for ARGV[6] ms, after the membership is gone
-- KEYS[4] static members only: the instances hash beside it (see claim.lua), only read: the
--         presence in it is renewed by refresh.lua, more often than the heartbeat
-- ARGV[1] member name
-- ARGV[2] heartbeat TTL in milliseconds
-- ARGV[3] capabilities of the member: "modulo,remainder,maxLeased"
-- ARGV[4] the member's process: "pid,host"
-- ARGV[5] the group's field in KEYS[3]
-- ARGV[6] TTL of KEYS[3] in milliseconds
-- ARGV[7] static members only: the caller's instance id
-- returns a flat array: member1, caps1, member2, caps2, ... sorted by member name; or, for a
-- static member, 0 (touching nothing) when KEYS[4] names another instance as holding the
-- member's name: another process took it over
-- Every write is bounded (one zset member, one field of each hash): it runs at maxmemory.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if KEYS[4] then
  local cur = redis.call('HGET', KEYS[4], ARGV[1])
  if cur and string.match(cur, '^([^|]*)|') ~= ARGV[7] then
    return 0
  end
end
local sent = string.format('%.0f', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3] .. ',' .. ARGV[4] .. ',' .. sent)
redis.call('HSET', KEYS[3], ARGV[5], sent .. ',' .. ARGV[4] .. ',beat,' .. ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[6])
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
for _, m in ipairs(dead) do
  redis.call('HDEL', KEYS[2], m)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 10)
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[2]) * 10)
local live = redis.call('ZRANGE', KEYS[1], 0, -1)
table.sort(live)
local out = {}
for _, m in ipairs(live) do
  out[#out + 1] = m
  out[#out + 1] = redis.call('HGET', KEYS[2], m) or ''
end
return out
