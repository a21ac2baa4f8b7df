#!lua flags=allow-oom
-- ack.lua: acknowledge entries of one partition for a group, fenced by the caller's lease;
-- apply the ack-delete policy, delete offloaded payloads no registered group needs any more,
-- and move the group's commit frontier forward (never backwards).
-- KEYS[1] lease key of the partition for the group (fence)
-- KEYS[2] partition stream
-- KEYS[3] commit-frontier hash of the partition: group -> highest acked id
-- KEYS[4] payload index zset of the partition
-- KEYS[5] the groups registered on the stream (stream:topic:{T:p:I}:groups): with those on
--         the stream, the groups an entry waits for (a group destroyed under its members
--         still counts until it is deleted)
-- KEYS[6..] per entry with more to do (ARGV below), in order: its ack-set key, its payload
--           key (the stream key when it has none)
-- ARGV[1] owner token
-- ARGV[2] consumer group
-- ARGV[3] ack-delete policy: none | immediate | all-groups-ack
-- ARGV[4] ack-set TTL in ms
-- ARGV[5] the frontier candidate: the highest id of the batch below every entry the member
--         still holds ("" moves nothing)
-- ARGV[6] n, the number of ids
-- ARGV[7..6+n] the stream ids to acknowledge
-- ARGV[7+n..] per entry with more to do (an offloaded payload, or every entry under
--             all-groups-ack), in order: stream id, payload ref ("" when none), "1" when a
--             fenced settle step (retry, dead letter) acked it already while the group held
--             it, else "0"
-- returns the number of entries acknowledged, or -1 when the caller no longer holds the lease
-- or the stream is gone
-- A stream deleted under its lease holder (a forced DeleteTopic, FLUSHALL) is not written
-- back: the caller has lost the partition as if its lease had gone.
if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('EXISTS', KEYS[2]) == 0 then
  return -1
end

local function parse(id)
  local ms, seq = string.match(id or '', '^(%d+)-(%d+)$')
  if not ms then return nil end
  return tonumber(ms), tonumber(seq)
end

local group, policy, ttl, highest = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local n = tonumber(ARGV[6])
-- Entries with more to do are acked one by one first: only an entry this group really held
-- (pending here, or when its settle step acked it) joins its ack set. An ack for an entry
-- the group does not hold (it was destroyed and recreated meanwhile) must not count the
-- group as done with it.
local held, acked = {}, 0
for i = 7 + n, #ARGV, 3 do
  local r = redis.call('XACK', KEYS[2], group, ARGV[i])
  held[ARGV[i]] = r == 1 or ARGV[i + 2] == '1'
  acked = acked + r
end
acked = acked + redis.call('XACK', KEYS[2], group, unpack(ARGV, 7, 6 + n))
if policy == 'immediate' then
  redis.call('XDEL', KEYS[2], unpack(ARGV, 7, 6 + n))
end

-- The groups an entry waits for: those on the stream and those registered beside it.
local function groupCount()
  local names = {}
  for _, g in ipairs(redis.call('XINFO', 'GROUPS', KEYS[2])) do
    for j = 1, #g, 2 do
      if g[j] == 'name' then names[g[j + 1]] = true end
    end
  end
  for _, g in ipairs(redis.call('SMEMBERS', KEYS[5])) do names[g] = true end
  local count = 0
  for _ in pairs(names) do count = count + 1 end
  return count
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
local k = 6
for i = 7 + n, #ARGV, 3 do
  local id, ref = ARGV[i], ARGV[i + 1]
  local ackset, payload = KEYS[k], KEYS[k + 1]
  k = k + 2
  if policy == 'immediate' then
    dropPayload(id, ref, payload)
  elseif held[id] then
    if groups == nil then
      groups = groupCount()
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
