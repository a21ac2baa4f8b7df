#!lua flags=allow-oom
-- write.lua: store a partition's outage record (outage.Write). allow-oom: the lease holder
-- writes it while its partition waits out a downstream outage, which is also when Redis may be
-- full (the backlog grows): the record is one small string (its reason cut to
-- outage.MaxReason bytes), rewritten in place at each failed probe, so it runs at maxmemory
-- as the other drain steps do.
-- KEYS[1] the partition's outage record (streaming:mq:outage:{T:p:I}:G)
-- ARGV[1] the record (JSON)
-- ARGV[2] its TTL in milliseconds
-- returns 1
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
