#!lua flags=no-writes
-- oldest.lua: find the first entry of a partition stream after a group's position that is not
-- another group's retry (the group's oldest undelivered entry). Read only.
-- KEYS[1] partition stream
-- KEYS[2..] the retry indexes (zsets of padded ids, see keys.RetryIndex) of the other
--           groups of the stream
-- ARGV[1] the group's last delivered id (the walk starts after it)
-- ARGV[2] most entries to look at
-- returns {id or '' when none was found, entries looked at, last id looked at or ''}
local function pad(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return string.rep('0', 20 - #ms) .. ms .. '-' .. string.rep('0', 20 - #seq) .. seq
end

local function skipped(key)
  for i = 2, #KEYS do
    if redis.call('ZSCORE', KEYS[i], key) then return true end
  end
  return false
end

local start, limit, looked = ARGV[1], tonumber(ARGV[2]), 0
local cur = start
while looked < limit do
  local count = math.min(100, limit - looked)
  local page = redis.call('XRANGE', KEYS[1], '(' .. cur, '+', 'COUNT', count)
  for _, e in ipairs(page) do
    looked = looked + 1
    if not skipped(pad(e[1])) then
      return {e[1], looked, e[1]}
    end
    cur = e[1]
  end
  if #page < count then break end
end
if cur == start then cur = '' end
return {'', looked, cur}
