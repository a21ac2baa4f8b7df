#!lua flags=allow-oom
-- writable.lua: write nothing, and answer whether Redis takes the writes of the drain steps
-- now (outage.Writable). A script without the no-writes flag is refused before it runs where
-- Redis refuses writes whatever the memory (MISCONF: a failed save with
-- stop-writes-on-bgsave-error; NOREPLICAS: min-replicas-to-write not met; READONLY: a
-- replica); allow-oom lets it run at maxmemory, as the outage record's write does.
-- KEYS[1] the partition's outage record: only routes the call to the node that holds it
-- returns 1
return 1
