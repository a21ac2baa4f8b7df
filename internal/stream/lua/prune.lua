#!lua flags=allow-oom
-- prune.lua: remove a group's consumers that belong to no live member and hold no pending
-- entries (deleting one with pending entries would drop its pending list: those entries would
-- never be delivered again, watermill-redisstream's bug #24). Checked and removed in one step,
-- so no entry can become pending for a consumer between the check and the removal.
-- KEYS[1] partition stream (stream:topic:{T:p:I})
-- ARGV[1] consumer group
-- ARGV[2] ms a consumer must have been idle (a member that just joined is not live yet for
--         the caller)
-- ARGV[3..] names of the group's live members
-- returns the names of the consumers removed
local ok, consumers = pcall(redis.call, 'XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
if not ok then return {} end
local live = {}
for i = 3, #ARGV do live[ARGV[i]] = true end
local minIdle = tonumber(ARGV[2])
local removed = {}
for _, c in ipairs(consumers) do
  local name, pending, idle
  for i = 1, #c, 2 do
    if c[i] == 'name' then name = c[i + 1]
    elseif c[i] == 'pending' then pending = c[i + 1]
    elseif c[i] == 'idle' then idle = c[i + 1] end
  end
  if name and pending == 0 and idle >= minIdle and not live[name] then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], name)
    removed[#removed + 1] = name
  end
end
return removed
