#!lua flags=no-writes
-- between.lua: count the entries of a stream between two ids (stream.CountBetween), without
-- sending them: XRANGE in chunks of 1000 inside the server, stopping past a bound.
-- KEYS[1]  the stream
-- ARGV[1]  start id ("-", an id, or "(id" to exclude it)
-- ARGV[2]  end id ("+", an id, or "(id")
-- ARGV[3]  bound: at most this many are counted
-- returns {count, exact}: exact is 1 when count is every entry in the range, 0 when the
-- range holds more than the bound (count is then the bound)
local n, limit, start = 0, tonumber(ARGV[3]), ARGV[1]
while true do
  local want = math.min(1000, limit - n + 1)
  local batch = redis.call('XRANGE', KEYS[1], start, ARGV[2], 'COUNT', want)
  n = n + #batch
  if #batch < want then
    return {n, 1}
  end
  if n > limit then
    return {limit, 0}
  end
  start = '(' .. batch[#batch][1]
end
