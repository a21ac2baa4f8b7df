-- ack.lua: acknowledge entries of one partition for a group, fenced by the caller's lease;
-- apply the ack-delete policy, delete offloaded payloads no registered group needs any more,
-- and move the group's commit frontier forward (never backwards).
-- KEYS[1] lease key of the partition for the group (fence)
-- KEYS[2] partition stream
-- KEYS[3] commit-frontier hash of the partition: group -> highest acked id
-- KEYS[4] payload index zset of the partition
-- KEYS[5..] per id, in order: its ack-set key, its payload key (the stream key when none)
-- ARGV[1] owner token
-- ARGV[2] consumer group
-- ARGV[3] ack-delete policy: none | immediate | all-groups-ack
-- ARGV[4] ack-set TTL in ms
-- ARGV[5..] per id, in order: stream id, payload ref ("" when none)
-- returns the number of entries acknowledged, or -1 when the caller no longer holds the lease
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return -1
end

local function parse(id)
  local ms, seq = string.match(id or '', '^(%d+)-(%d+)$')
  if not ms then return nil end
  return tonumber(ms), tonumber(seq)
end

local function less(a, b)
  local am, as = parse(a)
  local bm, bs = parse(b)
  return am < bm or (am == bm and as < bs)
end

local group, policy = ARGV[2], ARGV[3]
local ids = {}
for i = 5, #ARGV, 2 do
  ids[#ids + 1] = ARGV[i]
end
local acked = redis.call('XACK', KEYS[2], group, unpack(ids))

local best = ids[1]
for _, id in ipairs(ids) do
  if less(best, id) then best = id end
end
local cur = redis.call('HGET', KEYS[3], group)
if not parse(cur) or less(cur, best) then
  redis.call('HSET', KEYS[3], group, best)
end

local groups = nil
for j, id in ipairs(ids) do
  local ref = ARGV[4 + 2 * j]
  local ackset, payload = KEYS[3 + 2 * j], KEYS[4 + 2 * j]
  if policy == 'immediate' then
    redis.call('XDEL', KEYS[2], id)
    if ref ~= '' then
      redis.call('DEL', payload)
      redis.call('ZREM', KEYS[4], id .. '|' .. ref)
    end
  elseif policy == 'all-groups-ack' or ref ~= '' then
    if groups == nil then
      groups = #redis.call('XINFO', 'GROUPS', KEYS[2])
    end
    redis.call('SADD', ackset, group)
    redis.call('PEXPIRE', ackset, ARGV[4])
    if redis.call('SCARD', ackset) >= groups then
      if policy == 'all-groups-ack' then
        redis.call('XDEL', KEYS[2], id)
      end
      if ref ~= '' then
        redis.call('DEL', payload)
        redis.call('ZREM', KEYS[4], id .. '|' .. ref)
      end
      redis.call('DEL', ackset)
    end
  end
end
return acked
