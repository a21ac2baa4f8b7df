#!lua
-- park.lua: park a message published with a delay in its partition's delay set.
-- KEYS[1] delay zset of the partition (streaming:mq:delay:{T:p:I}): item id -> due ms
-- KEYS[2] delay items hash beside it: item id -> msgpack item
-- ARGV[1] item id
-- ARGV[2] due time, unix ms
-- ARGV[3] msgpack item
-- returns 1
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
