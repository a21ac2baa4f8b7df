#!lua
-- replay.lua: append a dead letter back to its partition, its payload in its own key when it is
-- over the offload threshold; optionally delete it from the DLQ, or ack it for the group
-- consuming the DLQ (fenced by that group's DLQ lease).
-- KEYS[1] partition DLQ stream (stream:topic:{T:p:I}:dlq)
-- KEYS[2] partition stream (stream:topic:{T:p:I})
-- KEYS[3] DLQ lease of the consuming group, or the DLQ key again when not consuming
-- KEYS[4] replay marks of the DLQ (stream:topic:{T:p:I}:dlq:replayed): DLQ id -> "ms|new id"
-- KEYS[5] payload key of an offloaded replay (streaming:mq:payload:{T:p:I}:REF), or the DLQ
--         key again when the payload is inline
-- KEYS[6] payload index zset of the partition ("id|ref" -> entry ms), or the DLQ key again
-- KEYS[7] retry index beside the partition stream of the group the replay is for
--         (keys.RetryIndex), or the DLQ key again for a replay to every group
-- KEYS[8] retry counts beside the partition stream (keys.RetryCount), or the DLQ key again
-- ARGV[1] DLQ entry id
-- ARGV[2] "1" to XDEL the DLQ entry
-- ARGV[3] owner token ("" when not consuming), ARGV[4] consuming group ("" when not)
-- ARGV[5] payload ref ("" when inline), ARGV[6] payload bytes, ARGV[7] payload TTL ms (0: none)
-- ARGV[8] the group the replay is for (x-retry-group, indexed and counted as a retry for lag,
--         see internal/lag), '' for a replay to every group
-- ARGV[9] "1" to replay only a letter without a replay mark (one replayed before is left alone)
-- ARGV[10..] field, value pairs of the replayed entry (carrying x-payload-hash-ref when offloaded)
-- A kept dead letter is marked as replayed (when, and as which entry); the marks expire a
-- week after the latest replay from this DLQ. A deleted one loses its mark.
-- returns the new entry id ("" when unknown); 0 when the DLQ entry does not exist; -1 when the
-- lease is lost; {mark} ("ms|id" of the earlier replay) when ARGV[9] is "1" and the letter was
-- replayed before: nothing is written
if ARGV[4] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[3] then
  return -1
end
local ref = ARGV[5]
if ref ~= '' and redis.call('EXISTS', KEYS[5]) == 1 then
  -- this very call ran before (a client retried it after losing the reply): it is done
  local mark = redis.call('HGET', KEYS[4], ARGV[1])
  return mark and string.match(mark, '|(.+)$') or ''
end
if #redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1]) == 0 then
  return 0
end
if ARGV[9] == '1' then
  local mark = redis.call('HGET', KEYS[4], ARGV[1])
  if mark then
    return {mark}
  end
end
if ref ~= '' then
  if tonumber(ARGV[7]) > 0 then
    redis.call('SET', KEYS[5], ARGV[6], 'PX', ARGV[7])
  else
    redis.call('SET', KEYS[5], ARGV[6])
  end
end
local id = redis.call('XADD', KEYS[2], '*', unpack(ARGV, 10))
if ARGV[8] ~= '' then
  local function pad(x)
    local ms, seq = string.match(x, '^(%d+)-(%d+)$')
    return string.rep('0', 20 - #ms) .. ms .. '-' .. string.rep('0', 20 - #seq) .. seq
  end
  redis.call('ZADD', KEYS[7], 0, pad(id))
  redis.call('HINCRBY', KEYS[8], ARGV[8], 1)
  local first = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)[1]
  redis.call('ZREMRANGEBYLEX', KEYS[7], '-', '(' .. pad(first[1]))
end
if ref ~= '' then
  redis.call('ZADD', KEYS[6], tonumber(string.match(id, '^(%d+)-')), id .. '|' .. ref)
end
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
