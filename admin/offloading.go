package admin

import (
	"time"

	"github.com/streamq-dev/streamq/internal/dlq"
	"github.com/streamq-dev/streamq/internal/keys"
)

// offloading is how admin's replays store large payloads (Options.Payloads.Threshold, -1: never).
type offloading struct {
	threshold int
	ttl       time.Duration
}

// of returns the offloading of a replay to partition p of topic.
func (o offloading) of(space keys.Space, topic string, p int) dlq.Offloading {
	return dlq.Offloading{
		Threshold: o.threshold, TTL: o.ttl, Index: space.PayloadIndex(topic, p),
		Key: func(ref string) string { return space.Payload(topic, p, ref) },
	}
}
