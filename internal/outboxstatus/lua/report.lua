#!lua
-- report.lua: one relay's periodic report on an outbox (outboxstatus.Write), in one step so
-- the outbox's totals and the relay's own entry agree.
-- KEYS[1]  the outbox's status hash        streaming:mq:outbox:{NAME}
-- KEYS[2]  the outbox's relays hash        streaming:mq:outbox:{NAME}:relays
-- ARGV[1]  relay id          ARGV[2]  relay host       ARGV[3]  relay pid
-- ARGV[4]  relay start (Unix ms)
-- ARGV[5]  rows waiting, "" when the relay could not measure them this time
-- ARGV[6]  age of the oldest waiting row in ms ("" with ARGV[5])
-- ARGV[7]  messages the relay moved since its previous report
-- ARGV[8]  table             ARGV[9]  consumer group   ARGV[10] dialect
-- ARGV[11] the relay's report interval (ms)
-- ARGV[12] forget (ms): relays silent for this long are removed from KEYS[2]
-- ARGV[13] TTL (ms) of both keys, renewed by every report
-- returns the report's time, the server's clock in Unix ms
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local moved = tonumber(ARGV[7])

redis.call('HSET', KEYS[1], 'table', ARGV[8], 'group', ARGV[9], 'dialect', ARGV[10],
  'reportedAt', now, 'reportedBy', ARGV[1], 'intervalMs', ARGV[11])
redis.call('HINCRBY', KEYS[1], 'moved', moved)
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[1], 'pending', ARGV[5], 'oldestAgeMs', ARGV[6], 'measuredAt', now)
end

local total = moved
local prev = redis.call('HGET', KEYS[2], ARGV[1])
if prev then
  total = total + (tonumber(cjson.decode(prev).moved) or 0)
end
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode({host = ARGV[2], pid = tonumber(ARGV[3]),
  startedAt = tonumber(ARGV[4]), reportedAt = now, intervalMs = tonumber(ARGV[11]), moved = total}))

local forget = tonumber(ARGV[12])
local all = redis.call('HGETALL', KEYS[2])
for i = 1, #all, 2 do
  local ok, r = pcall(cjson.decode, all[i + 1])
  if not ok or type(r) ~= 'table' or (tonumber(r.reportedAt) or 0) < now - forget then
    redis.call('HDEL', KEYS[2], all[i])
  end
end

redis.call('PEXPIRE', KEYS[1], ARGV[13])
redis.call('PEXPIRE', KEYS[2], ARGV[13])
return now
