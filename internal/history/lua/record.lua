#!lua
-- record.lua: append one sample to a topic's history (history.Record), unless another
-- process recorded one less than the minimum gap ago, and trim what is older than the
-- retention, in one step so that concurrent writers (dashboards, members) neither crowd the
-- stream nor race the trim.
-- KEYS[1]  the topic's history stream          streaming:mq:history:{T}
-- ARGV[1]  minimum gap (ms): no sample is added when the newest is younger than this
-- ARGV[2]  retention (ms): entries older than this are removed (XTRIM MINID); the key
--          expires after twice the retention without a sample
-- ARGV[3]  hard cap on the number of entries (XTRIM MAXLEN), whatever their age
-- ARGV[4..] the sample's field/value pairs
-- returns the new entry's id, or false when a recent sample made this one needless
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local gap = tonumber(ARGV[1])
local retain = tonumber(ARGV[2])

local newest = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if newest[1] then
  local ms = tonumber(string.match(newest[1][1], '^(%d+)'))
  if ms and now - ms < gap then
    return false
  end
end

local fields = {}
for i = 4, #ARGV do
  fields[#fields + 1] = ARGV[i]
end
local id = redis.call('XADD', KEYS[1], '*', unpack(fields))
redis.call('XTRIM', KEYS[1], 'MINID', tostring(now - retain))
redis.call('XTRIM', KEYS[1], 'MAXLEN', ARGV[3])
redis.call('PEXPIRE', KEYS[1], 2 * retain)
return id
