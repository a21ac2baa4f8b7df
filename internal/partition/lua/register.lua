-- register.lua: register a topic's metadata and partition set, idempotently.
-- KEYS[1] topic meta hash      (streaming:mq:topic:{T}:meta)
-- KEYS[2] topic partitions set (streaming:mq:topic:{T}:partitions)
-- ARGV[1] partition count to set when the topic is new
-- ARGV[2] stream key prefix of the topic's partitions, e.g. "stream:topic:{T:p:" (index and "}" appended)
-- returns the topic's partition count (1 when the stored value is unparseable)
redis.call('HSETNX', KEYS[1], 'partitionCount', ARGV[1])
local n = tonumber(redis.call('HGET', KEYS[1], 'partitionCount'))
if n == nil or n < 1 or n ~= math.floor(n) then
  n = 1
end
if redis.call('SCARD', KEYS[2]) < n then
  for i = 0, n - 1 do
    redis.call('SADD', KEYS[2], ARGV[2] .. i .. '}')
  end
end
return n
