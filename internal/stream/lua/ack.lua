-- ack.lua: acknowledge entries of one partition for a group, fenced by the caller's lease;
-- apply the ack-delete policy, delete offloaded payloads no registered group needs any more,
-- and move the group's commit frontier forward (never backwards).
-- KEYS[1] lease key of the partition for the group (fence)
-- KEYS[2] partition stream
-- KEYS[3] commit-frontier hash of the partition: group -> highest acked id
-- KEYS[4] payload index zset of the partition
-- KEYS[5..] per entry with more to do (ARGV below), in order: its ack-set key, its payload
--           key (the stream key when it has none)
-- ARGV[1] owner token
-- ARGV[2] consumer group
-- ARGV[3] ack-delete policy: none | immediate | all-groups-ack
-- ARGV[4] ack-set TTL in ms
-- ARGV[5] highest id of the batch (the frontier candidate)
-- ARGV[6] n, the number of ids
-- ARGV[7..6+n] the stream ids to acknowledge
-- ARGV[7+n..] per entry with more to do (an offloaded payload, or every entry under
--             all-groups-ack), in order: stream id, payload ref ("" when none)
-- returns the number of entries acknowledged, or -1 when the caller no longer holds the lease
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return -1
end

local function parse(id)
  local ms, seq = string.match(id or '', '^(%d+)-(%d+)$')
  if not ms then return nil end
  return tonumber(ms), tonumber(seq)
end

local group, policy, ttl, highest = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local n = tonumber(ARGV[6])
local acked = redis.call('XACK', KEYS[2], group, unpack(ARGV, 7, 6 + n))
if policy == 'immediate' then
  redis.call('XDEL', KEYS[2], unpack(ARGV, 7, 6 + n))
end

local cm, cs = parse(redis.call('HGET', KEYS[3], group))
local hm, hs = parse(highest)
if hm and (not cm or cm < hm or (cm == hm and cs < hs)) then
  redis.call('HSET', KEYS[3], group, highest)
end

local function dropPayload(id, ref, payload)
  if ref ~= '' then
    redis.call('DEL', payload)
    redis.call('ZREM', KEYS[4], id .. '|' .. ref)
  end
end

local groups = nil
local k = 5
for i = 7 + n, #ARGV, 2 do
  local id, ref = ARGV[i], ARGV[i + 1]
  local ackset, payload = KEYS[k], KEYS[k + 1]
  k = k + 2
  if policy == 'immediate' then
    dropPayload(id, ref, payload)
  else
    if groups == nil then
      groups = #redis.call('XINFO', 'GROUPS', KEYS[2])
    end
    redis.call('SADD', ackset, group)
    redis.call('PEXPIRE', ackset, ttl)
    if redis.call('SCARD', ackset) >= groups then
      if policy == 'all-groups-ack' then
        redis.call('XDEL', KEYS[2], id)
      end
      dropPayload(id, ref, payload)
      redis.call('DEL', ackset)
    end
  end
end
return acked
