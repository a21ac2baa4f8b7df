#!lua flags=allow-oom
-- seen.lua: record that a consumer group is live on a partition (its lease holder runs it every
-- trim interval), so retention keeps waiting for it; a group retention had left out for its
-- group expiry holds retention back again from now on. allow-oom: a consumer draining a full
-- Redis must stay live (one field rewritten in place; a new one the first time).
-- KEYS[1] group-seen hash of the partition (stream:topic:{T:p:I}:seen)
-- KEYS[2] the partition stream: when it is gone (a forced DeleteTopic), nothing is written
-- ARGV[1] group
-- ARGV[2] now, Unix ms (the caller's clock)
-- returns the ms since which retention had left the group out ("expired:G"), or "" when it had not
if redis.call('EXISTS', KEYS[2]) == 0 then return '' end
local expiredField = 'expired:' .. ARGV[1]
local was = redis.call('HGET', KEYS[1], expiredField)
redis.call('HSET', KEYS[1], 'seen:' .. ARGV[1], ARGV[2])
if not was then return '' end
redis.call('HDEL', KEYS[1], expiredField)
return was
