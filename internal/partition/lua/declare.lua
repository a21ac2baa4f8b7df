#!lua flags=allow-oom
-- declare.lua: record a consumer group and its start id on a topic (Registry.DeclareGroup). A
-- step of every Subscribe, so it runs on a full Redis too (HSET alone is refused there, even
-- for a field that exists); its write is one hash field.
-- KEYS[1] topic declared-groups hash (streaming:mq:topic:{T}:groups): group -> start id
-- ARGV[1] group
-- ARGV[2] start id
-- returns 1 when the group was new, 0 otherwise
return redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
