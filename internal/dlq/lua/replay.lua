-- replay.lua: append a dead letter back to its partition; optionally delete it from the DLQ,
-- or ack it for the group consuming the DLQ (fenced by that group's DLQ lease).
-- KEYS[1] partition DLQ stream (stream:topic:{T:p:I}:dlq)
-- KEYS[2] partition stream (stream:topic:{T:p:I})
-- KEYS[3] DLQ lease of the consuming group, or the DLQ key again when not consuming
-- KEYS[4] replay marks of the DLQ (stream:topic:{T:p:I}:dlq:replayed): DLQ id -> "ms|new id"
-- ARGV[1] DLQ entry id
-- ARGV[2] "1" to XDEL the DLQ entry
-- ARGV[3] owner token ("" when not consuming), ARGV[4] consuming group ("" when not)
-- ARGV[5..] field, value pairs of the replayed entry
-- A kept dead letter is marked as replayed (when, and as which entry); the marks expire a
-- week after the latest replay from this DLQ. A deleted one loses its mark.
-- returns the new entry id; 0 when the DLQ entry does not exist; -1 when the lease is lost
if ARGV[4] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[3] then
  return -1
end
if #redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1]) == 0 then
  return 0
end
local id = redis.call('XADD', KEYS[2], '*', unpack(ARGV, 5))
if ARGV[4] ~= '' then
  redis.call('XACK', KEYS[1], ARGV[4], ARGV[1])
end
if ARGV[2] == '1' then
  redis.call('XDEL', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[4], ARGV[1])
else
  local now = redis.call('TIME')
  redis.call('HSET', KEYS[4], ARGV[1], (now[1] * 1000 + math.floor(now[2] / 1000)) .. '|' .. id)
  redis.call('PEXPIRE', KEYS[4], 7 * 24 * 3600 * 1000)
end
return id
