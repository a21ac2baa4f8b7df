#!lua flags=allow-oom
-- refused.lua: note that Redis refused a publish to the topic because it is at maxmemory
-- (NoteRefused). It runs on the full Redis it reports, and its write is one small hash: the
-- first refusal time, kept while refusals go on, and the last one, with a TTL refreshed at each
-- note, so that the record clears itself once publishes stop being refused. Times are the
-- server's clock, the same for every Publisher that writes it.
-- KEYS[1] topic refusal hash (streaming:mq:refused:{T}): since, last (Unix ms)
-- ARGV[1] TTL ms
-- returns the since time, Unix ms
local t = redis.call('TIME')
local now = string.format('%.0f', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
redis.call('HSETNX', KEYS[1], 'since', now)
redis.call('HSET', KEYS[1], 'last', now)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return tonumber(redis.call('HGET', KEYS[1], 'since'))
