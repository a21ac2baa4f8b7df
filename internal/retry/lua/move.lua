#!lua flags=allow-oom
-- move.lua: append due items of a retry or delay set to their partition (take due -> append
-- -> remove), fenced by the caller's lease. Bad items never stop the mover, as the seed says:
-- an item without a topic, without fields, or with fields XADD refuses is dropped; a
-- partition that is not a plain decimal number reads as 0 (as Item.Partition reads it), and an item whose partition is not this one is handed
-- back to the caller (another partition is another hash slot), still in the set.
-- KEYS[1] lease key the caller holds on this partition (fence)
-- KEYS[2] zset: item id -> due ms
-- KEYS[3] items hash: item id -> msgpack item {topic, partitionId, retryCount, fields}
-- KEYS[4] partition stream: when it is gone (a forced DeleteTopic), nothing is written
-- KEYS[5] retry index of the set's group beside the stream (keys.RetryIndex), or KEYS[4]
--         again for a delay set
-- KEYS[6] retry counts beside the stream (keys.RetryCount), or KEYS[4] again for a delay set
-- ARGV[1] owner token
-- ARGV[2] this partition's index
-- ARGV[3] most items to move
-- ARGV[4] the group of a retry set, whose appended retries are indexed and counted (for lag,
--         see internal/lag); '' for a delay set (published messages)
-- (length retention trims the partition in the background, never on the append)
-- returns {moved, dropped, next due ms or -1, {id, partition, {field, value, ...}, ...} handed
-- back}, or -1 when the caller no longer holds the lease or the stream is gone
if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('EXISTS', KEYS[4]) == 0 then
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

local function pad(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return string.rep('0', 20 - #ms) .. ms .. '-' .. string.rep('0', 20 - #seq) .. seq
end

local function append(fields)
  local res = redis.pcall('XADD', KEYS[4], '*', unpack(fields))
  if type(res) == 'table' and res.err then return false end
  if ARGV[4] ~= '' then
    redis.call('ZADD', KEYS[5], 0, pad(res))
    redis.call('HINCRBY', KEYS[6], ARGV[4], 1)
  end
  return true
end

-- partitionOf reads a partitionId as Go's strconv.Atoi does (a msgpack number of another
-- writer as the whole number it is), anything else, and anything past 15 digits, which no
-- topic has, as 0.
local function partitionOf(v)
  if type(v) == 'number' then
    if v >= 0 and v < 1e15 and v == math.floor(v) then return v end
    return 0
  end
  if type(v) ~= 'string' then return 0 end
  local digits = string.match(v, '^%+?(%d+)$')
  if digits == nil or #digits > 15 then return 0 end
  return tonumber(digits)
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
    local p = partitionOf(item.partitionId)
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
if moved > 0 and ARGV[4] ~= '' then
  local first = redis.call('XRANGE', KEYS[4], '-', '+', 'COUNT', 1)[1]
  redis.call('ZREMRANGEBYLEX', KEYS[5], '-', '(' .. pad(first[1]))
end
local nextDue = -1
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if first[2] then
  nextDue = tonumber(first[2])
end
return {moved, dropped, nextDue, back}
