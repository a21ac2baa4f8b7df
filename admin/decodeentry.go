package admin

import "github.com/redis/go-redis/v9"

// DecodeEntry's parameter is the one go-redis type admin names besides redis.UniversalClient:
// it is part of admin's API, for tools that read streams with their own client; admin itself
// reads none (TestRedisBoundary allows it in this signature only).

// DecodeEntry decodes an entry of partition p of topic as read from its stream (XRANGE,
// XREAD): what ListRecent and Range return, for tools that read streams themselves.
func DecodeEntry(topic string, p int, m redis.XMessage) Entry {
	return toEntry(topic, p, m.ID, m.Values)
}
