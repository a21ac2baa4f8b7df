-- move.lua: append due items of a retry or delay set to their partition (take due -> append
-- -> remove), fenced by the caller's lease. Bad items never stop the mover, as the seed says:
-- an item without a topic, without fields, or with fields XADD refuses is dropped; a
-- non-numeric partition reads as 0, and an item whose partition is not this one is handed
-- back to the caller (another partition is another hash slot), still in the set.
-- KEYS[1] lease key the caller holds on this partition (fence)
-- KEYS[2] zset: item id -> due ms
-- KEYS[3] items hash: item id -> msgpack item {topic, partitionId, retryCount, fields}
-- KEYS[4] partition stream
-- ARGV[1] owner token
-- ARGV[2] this partition's index
-- ARGV[3] most items to move
-- (length retention trims the partition in the background, never on the append)
-- returns {moved, dropped, next due ms or -1, {id, partition, {field, value, ...}, ...} handed
-- back}, or -1 when the caller no longer holds the lease
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return -1
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
local moved, dropped, back = 0, 0, {}

local function usable(fields)
  if type(fields) ~= 'table' or #fields == 0 or #fields % 2 ~= 0 then return false end
  for _, v in ipairs(fields) do
    if type(v) ~= 'string' and type(v) ~= 'number' then return false end
  end
  return true
end

local function append(fields)
  local res = redis.pcall('XADD', KEYS[4], '*', unpack(fields))
  return not (type(res) == 'table' and res.err)
end

local function drop(id)
  redis.call('ZREM', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
  dropped = dropped + 1
end
for _, id in ipairs(due) do
  local blob = redis.call('HGET', KEYS[3], id)
  local ok, item = false, nil
  if blob then
    ok, item = pcall(cmsgpack.unpack, blob)
  end
  if not ok or type(item) ~= 'table' or type(item.topic) ~= 'string' or item.topic == '' or not usable(item.fields) then
    drop(id)
  else
    local p = tonumber(item.partitionId)
    if p == nil or p < 0 or p ~= math.floor(p) then
      p = 0
    end
    if p ~= tonumber(ARGV[2]) then
      back[#back + 1] = id
      back[#back + 1] = p
      back[#back + 1] = item.fields
    elseif append(item.fields) then
      redis.call('ZREM', KEYS[2], id)
      redis.call('HDEL', KEYS[3], id)
      moved = moved + 1
    else
      drop(id)
    end
  end
end
local nextDue = -1
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if first[2] then
  nextDue = tonumber(first[2])
end
return {moved, dropped, nextDue, back}
