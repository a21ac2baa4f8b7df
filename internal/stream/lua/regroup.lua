#!lua flags=allow-oom
-- regroup.lua: recreate a consumer group that disappeared from a partition (XGROUP DESTROY, a
-- flushed or failed-over Redis, a deleted stream) at the latest position known to survive: the
-- group's commit frontier or the highest id the calling member acked, whichever is later;
-- without either, at the group's start id. A group that exists is left alone.
-- KEYS[1] partition stream (stream:topic:{T:p:I})
-- KEYS[2] commit-frontier hash of the partition (streaming:mq:commit:{T:p:I}): group -> id
-- KEYS[3] the groups registered on the stream (stream:topic:{T:p:I}:groups)
-- KEYS[4] the groups recreated lately (stream:topic:{T:p:I}:regrouped): group -> "token|position"
-- ARGV[1] consumer group
-- ARGV[2] highest id the member acked on the partition ("" when none)
-- ARGV[3] the group's start id when no position survives ("0-0", "$" or an id)
-- ARGV[4] this call's token: the same call sent again (its reply was lost, the client
--         retried) finds its own mark and reports the creation again
-- returns {0, ""} when the group exists, {1, position} when this call created it
local ok, groups = pcall(redis.call, 'XINFO', 'GROUPS', KEYS[1])
if ok then
  for _, g in ipairs(groups) do
    for i = 1, #g, 2 do
      if g[i] == 'name' and g[i + 1] == ARGV[1] then
        local mark = redis.call('HGET', KEYS[4], ARGV[1])
        local token, at = string.match(mark or '', '^([^|]*)|(.*)$')
        if token == ARGV[4] then return {1, at} end
        return {0, ''}
      end
    end
  end
end

local function parse(id)
  local ms, seq = string.match(id or '', '^(%d+)-(%d+)$')
  if not ms then return nil end
  return tonumber(ms), tonumber(seq)
end
local function later(a, b)
  local am, as = parse(a)
  local bm, bs = parse(b)
  if not am then return b end
  if not bm then return a end
  if am > bm or (am == bm and as > bs) then return a end
  return b
end

local pos = later(redis.call('HGET', KEYS[2], ARGV[1]), ARGV[2])
if not parse(pos) then pos = ARGV[3] end
redis.call('XGROUP', 'CREATE', KEYS[1], ARGV[1], pos, 'MKSTREAM')
redis.call('SADD', KEYS[3], ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[4] .. '|' .. pos)
redis.call('PEXPIRE', KEYS[4], 60000)
return {1, pos}
