#!lua flags=no-writes
-- live.lua: read the live members of membership zsets against the server's clock. no-writes:
-- it writes nothing, so Redis runs it at maxmemory and where it refuses writes (MISCONF,
-- NOREPLICAS, a replica), when the operators' tools need it most.
-- KEYS[1..n] membership zsets (streaming:mq:members:{T}:G, streaming:mq:dlqmembers:{T}:G),
--            member -> heartbeat expiry in server ms; all of one topic (one hash slot)
-- returns an array of n arrays: the members of KEYS[i] whose expiry is after the server's
-- TIME, sorted; empty for a key that does not exist or is not a zset
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local after = string.format('(%.0f', now)
local out = {}
for i, key in ipairs(KEYS) do
  local live = {}
  if redis.call('TYPE', key).ok == 'zset' then
    live = redis.call('ZRANGEBYSCORE', key, after, '+inf')
    table.sort(live)
  end
  out[i] = live
end
return out
