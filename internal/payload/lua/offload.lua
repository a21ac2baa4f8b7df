#!lua
-- offload.lua: store a large payload in its own key and append the entry that refers to it.
-- KEYS[1] payload key (streaming:mq:payload:{T:p:I}:REF)
-- KEYS[2] partition stream
-- KEYS[3] payload index zset of the partition: "id|ref" -> entry ms
-- ARGV[1] payload bytes
-- ARGV[2] payload TTL ms (0: none)
-- ARGV[3] ref
-- ARGV[4..] field, value pairs of the entry (carrying x-payload-hash-ref)
-- (length retention trims the partition in the background, never on the append)
-- The XADD is the first write: when it is refused (a key of another type, an entry without
-- fields) the call ends with its error and nothing written, no payload key without its entry.
-- returns the entry id, or 0 when the payload key exists already: this very call ran before
-- (a client retried it after losing the reply), and a second entry would share the payload,
-- which the first entry's acks then delete under it
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local id = redis.call('XADD', KEYS[2], '*', unpack(ARGV, 4))
if tonumber(ARGV[2]) > 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else
  redis.call('SET', KEYS[1], ARGV[1])
end
local ms = tonumber(string.match(id, '^(%d+)-'))
redis.call('ZADD', KEYS[3], ms, id .. '|' .. ARGV[3])
return id
