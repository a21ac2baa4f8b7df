#!lua flags=allow-oom
-- drop.lua: a group consuming a DLQ as a topic drops a dead letter: ack it for that group and
-- delete it from the DLQ, atomically, fenced by the group's DLQ lease.
-- KEYS[1] DLQ lease of the consuming group (fence)
-- KEYS[2] partition DLQ stream (stream:topic:{T:p:I}:dlq)
-- ARGV[1] owner token
-- ARGV[2] consuming group
-- ARGV[3] DLQ entry id
-- returns 1 when the entry was deleted, 0 when it was gone already, -1 when the caller no
-- longer holds the lease
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return -1
end
redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
return redis.call('XDEL', KEYS[2], ARGV[3])
