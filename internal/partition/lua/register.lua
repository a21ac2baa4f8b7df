#!lua flags=allow-oom
-- register.lua: register a topic's metadata and partition set, idempotently, and report the
-- consumer groups declared on it.
-- KEYS[1] topic meta hash            (streaming:mq:topic:{T}:meta)
-- KEYS[2] topic partitions set       (streaming:mq:topic:{T}:partitions)
-- KEYS[3] topic declared-groups hash (streaming:mq:topic:{T}:groups): group -> start id
-- ARGV[1] partition count to set when the topic is new
-- ARGV[2] stream key prefix of the topic's partitions, e.g. "stream:topic:{T:p:" (index and "}" appended)
-- ARGV[3..] field, value pairs to set in the meta hash (a publisher's retention settings)
-- returns {the topic's partition count (1 when the stored value is unparseable), 1 when this
-- call created the topic else 0, {group, start id, ...} declared}
local created = redis.call('HSETNX', KEYS[1], 'partitionCount', ARGV[1])
if #ARGV > 2 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 3))
end
local n = tonumber(redis.call('HGET', KEYS[1], 'partitionCount'))
if n == nil or n < 1 or n ~= math.floor(n) then
  n = 1
end
if redis.call('SCARD', KEYS[2]) < n then
  for i = 0, n - 1 do
    redis.call('SADD', KEYS[2], ARGV[2] .. i .. '}')
  end
end
return {n, created, redis.call('HGETALL', KEYS[3])}
