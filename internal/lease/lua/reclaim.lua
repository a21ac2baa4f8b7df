#!lua flags=allow-oom
-- reclaim.lua: take a partition lease for a static member: free, already the caller's, or
-- held by an earlier process of the same member (which the caller's claim of the member's
-- name has superseded). Replacing the token fences that process out: its renewals, acks
-- and other fenced writes fail from now on.
-- KEYS[1] lease key (streaming:mq:lease:{T:p:I}:G)
-- ARGV[1] owner token ("member#nonce.epoch")
-- ARGV[2] TTL in milliseconds
-- ARGV[3] member name
-- returns 1 when the caller holds the lease (taken free, or extended), 2 when it took it over
-- from another token of the member, 0 when another member holds it
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if cur then
  if string.match(cur, '^(.*)#') ~= ARGV[3] then
    return 0
  end
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 2
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
