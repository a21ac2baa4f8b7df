#!lua flags=allow-oom
-- release.lua: delete a lease only when the caller's token owns it (never a successor's).
-- KEYS[1] lease key (streaming:mq:lease:{T:p:I}:G)
-- ARGV[1] owner token
-- returns 1 when released, 0 when the caller did not own it
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
