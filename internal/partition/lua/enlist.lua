#!lua flags=allow-oom
-- enlist.lua: add a topic to the registry of topics (the last step of Registry.RegisterTopic),
-- on a full Redis too (SADD alone is refused there, even for a member that exists): a
-- Subscriber that states a partition count registers the topic it joins. One set member.
-- KEYS[1] the registry (streaming:mq:topics:registry)
-- ARGV[1] topic
-- returns 1 when the topic was new, 0 otherwise
return redis.call('SADD', KEYS[1], ARGV[1])
