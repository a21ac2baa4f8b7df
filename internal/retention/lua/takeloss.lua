#!lua flags=allow-oom
-- takeloss.lua: take the count of a group's entries that hard trimming removed from a
-- partition since the last take (any member's), and reset it; the cumulative count stays.
-- allow-oom: it only deletes a field, so a lease holder draining a full Redis still reports
-- what the group lost.
-- KEYS[1] the partition's trim-loss hash (streaming:mq:trimloss:{T:p:I})
-- ARGV[1] the field of the group's new losses ("new:G")
-- returns the count taken, 0 when there was none
local n = redis.call('HGET', KEYS[1], ARGV[1])
if not n then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
return tonumber(n)
