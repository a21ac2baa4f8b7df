#!lua flags=allow-oom
-- trim.lua: apply one retention rule to a partition stream without removing what a consumer
-- group is still owed (Redis 8.2's ACKED trimming, built for Redis 7): an entry goes only when
-- every group registered on the stream, live or not, has been delivered it and acked it. With
-- the hard policy the rule is applied all the same, and every entry removed before some group
-- acked it is counted per group in the trim-loss hash. A group not seen live on the partition
-- for the group expiry (ARGV[6]) is left out of the bound all the same, and what it loses is
-- counted as under the hard policy: a forgotten group cannot fill Redis.
-- KEYS[1] partition stream (stream:topic:{T:p:I})
-- KEYS[2] trim-loss hash of the partition (streaming:mq:trimloss:{T:p:I}): "total:G" and
--         "new:G" -> entries group G lost to hard trimming
-- ARGV[1] rule: "len" (keep about ARGV[2] entries), "age" (remove entries below id ARGV[2]) or
--         "acked" (remove whole macro nodes of entries every group acked, whatever their
--         number: Redis is short of memory; nothing when no group is registered)
-- ARGV[2] the rule's threshold: a length, or a stream id
-- ARGV[3] "1" exact trimming, "0" approximate (whole macro nodes only: cheaper, a few more kept)
-- ARGV[4] "1" hard policy, "0" never remove an entry a group has not acked
-- KEYS[3] group-seen hash of the partition (stream:topic:{T:p:I}:seen): "seen:G" -> ms group G
--         was last live there, "expired:G" -> ms since which retention leaves G out
-- ARGV[5] most entries the hard phase removes in one call
-- ARGV[6] group expiry in ms: a group not seen for longer no longer holds retention back; 0: off
-- ARGV[7] now, Unix ms (the caller's clock)
-- returns {removed, removed before some group acked them (distinct entries), "1" when the hard
-- phase stopped at ARGV[5] and more is due, else "0", the groups this call found expired first}
local stream, rule, exact, hard = KEYS[1], ARGV[1], ARGV[3] == '1', ARGV[4] == '1'
local chunk, expiry, now = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local newly = {}

local function parse(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(seq)
end
local function less(a, b)
  local am, as = parse(a)
  local bm, bs = parse(b)
  return am < bm or (am == bm and as < bs)
end
local function after(id)
  local ms, seq = parse(id)
  return string.format('%d-%d', ms, seq + 1)
end
local function field(flat, name)
  for i = 1, #flat, 2 do
    if flat[i] == name then return flat[i + 1] end
  end
end

-- expired: whether group name was last seen longer than the expiry ago. A group without a
-- record (registered, never consumed, or from before records were kept) is seen from now on.
local function expired(name)
  local seen = redis.call('HGET', KEYS[3], 'seen:' .. name)
  if not seen then
    redis.call('HSET', KEYS[3], 'seen:' .. name, ARGV[7])
    return false
  end
  if expiry <= 0 or now - tonumber(seen) <= expiry then return false end
  if redis.call('HSETNX', KEYS[3], 'expired:' .. name, ARGV[7]) == 1 then newly[#newly + 1] = name end
  return true
end

local len = redis.call('XLEN', stream)
if len == 0 then return {0, 0, '0', newly} end
local maxlen, minid = 0, nil
if rule == 'len' then
  maxlen = tonumber(ARGV[2])
  if len <= maxlen then return {0, 0, '0', newly} end
elseif rule == 'age' then
  minid = ARGV[2]
  local first = redis.call('XRANGE', stream, '-', '+', 'COUNT', 1)
  if #first == 0 or not less(first[1][1], minid) then return {0, 0, '0', newly} end
end

-- The lowest id some group still needs: its oldest pending entry, or the entry after the last
-- one delivered to it (bound); and the lowest of those of the groups not expired (live, nil
-- when every group expired).
local groups, bound, live = {}, nil, nil
for _, g in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
  local name, last = field(g, 'name'), field(g, 'last-delivered-id')
  local b = after(last)
  if tonumber(field(g, 'pending')) > 0 then
    local low = redis.call('XPENDING', stream, name)[2]
    if low and less(low, b) then b = low end
  end
  if bound == nil or less(b, bound) then bound = b end
  if not expired(name) and (live == nil or less(b, live)) then live = b end
  groups[#groups + 1] = {name = name, last = last}
end

local removed = 0
if rule == 'acked' then
  -- what every group acked, expired ones included (their losses are left to the rules above)
  if bound == nil then return {0, 0, '0', newly} end
  return {redis.call('XTRIM', stream, 'MINID', '~', bound, 'LIMIT', 0), 0, '0', newly}
elseif rule == 'len' then
  local excess = len - maxlen
  if bound == nil then
    if exact then
      removed = redis.call('XTRIM', stream, 'MAXLEN', '=', maxlen)
    else
      removed = redis.call('XTRIM', stream, 'MAXLEN', '~', maxlen, 'LIMIT', 0)
    end
  else
    removed = redis.call('XTRIM', stream, 'MINID', '~', bound, 'LIMIT', excess)
    if exact and removed < excess then
      -- what approximate trimming left below the bound: part of one macro node
      local rest = redis.call('XRANGE', stream, '-', '(' .. bound, 'COUNT', excess - removed)
      if #rest > 0 then
        removed = removed + redis.call('XTRIM', stream, 'MINID', '=', after(rest[#rest][1]))
      end
    end
  end
else
  local cut = minid
  if bound ~= nil and less(bound, cut) then cut = bound end
  if exact then
    removed = redis.call('XTRIM', stream, 'MINID', '=', cut)
  else
    removed = redis.call('XTRIM', stream, 'MINID', '~', cut, 'LIMIT', 0)
  end
end
if bound == nil then return {removed, 0, '0', newly} end
-- The hard phase goes up to limit: nil (no limit) under the hard policy or when every group
-- expired, else the live groups' bound, when expired groups hold retention back below it.
local limit = nil
if not hard then
  if live ~= nil and not less(bound, live) then return {removed, 0, '0', newly} end
  limit = live
end

-- Hard phase: remove the oldest entries the rule still asks for (below limit), counting for
-- each group those of them it had not acked (delivered after its position, or pending for
-- it). A group's pending list may hold ids in their range that are no longer in the stream
-- (deleted by XDEL, e.g. the immediate ack-delete policy on another group's ack): only the
-- victims count, and the list is read in pages until past the last victim.
local victims
if rule == 'len' then
  local excess = redis.call('XLEN', stream) - maxlen
  if excess <= 0 then return {removed, 0, '0', newly} end
  local top = '+'
  if limit then top = '(' .. limit end
  victims = redis.call('XRANGE', stream, '-', top, 'COUNT', math.min(excess, chunk))
else
  local top = minid
  if limit and less(limit, top) then top = limit end
  victims = redis.call('XRANGE', stream, '-', '(' .. top, 'COUNT', chunk)
end
if #victims == 0 then return {removed, 0, '0', newly} end
local first, last = victims[1][1], victims[#victims][1]
local victim = {}
for _, v in ipairs(victims) do victim[v[1]] = true end

-- pendingVictims counts the victims pending for group g at or below its position (those
-- above it are counted as not delivered), marking them in lost.
local function pendingVictims(g, lost)
  local n, from = 0, first
  while true do
    local page = redis.call('XPENDING', stream, g.name, from, last, #victims)
    for _, p in ipairs(page) do
      if victim[p[1]] and not less(g.last, p[1]) then
        n = n + 1
        lost[p[1]] = true
      end
    end
    if #page < #victims then return n end
    from = '(' .. page[#page][1]
  end
end

local lost = {}
for _, g in ipairs(groups) do
  local n = 0
  for _, v in ipairs(victims) do
    if less(g.last, v[1]) then
      n = n + 1
      lost[v[1]] = true
    end
  end
  n = n + pendingVictims(g, lost)
  if n > 0 then
    redis.call('HINCRBY', KEYS[2], 'total:' .. g.name, n)
    redis.call('HINCRBY', KEYS[2], 'new:' .. g.name, n)
  end
end
local unacked = 0
for _ in pairs(lost) do unacked = unacked + 1 end
removed = removed + redis.call('XTRIM', stream, 'MINID', '=', after(last))
local more = '0'
if #victims == chunk then more = '1' end
return {removed, unacked, more, newly}
