#!lua flags=allow-oom
-- group.lua: create a consumer group on a partition stream at a start id (MKSTREAM) unless it
-- exists, and register it beside the stream. It runs on a full Redis (XGROUP CREATE alone is
-- refused there, even for a group that exists): a member joining at maxmemory reaches its
-- backlog. Its writes are bounded: a group and a set member.
-- KEYS[1] partition stream (stream:topic:{T:p:I})
-- KEYS[2] registered-groups set beside it
-- ARGV[1] group
-- ARGV[2] start id of a new group
-- returns 1 when it created the group, 0 when the group existed
redis.call('SADD', KEYS[2], ARGV[1])
local res = redis.pcall('XGROUP', 'CREATE', KEYS[1], ARGV[1], ARGV[2], 'MKSTREAM')
if type(res) == 'table' and res.err then
  if string.sub(res.err, 1, 9) == 'BUSYGROUP' then
    return 0
  end
  return redis.error_reply(res.err)
end
return 1
