package publish

// Counters count what the engine did, by topic and partition. Calls happen on the publish
// path, from many goroutines: implementations must be safe for concurrent use and cheap.
type Counters interface {
	// Produced counts a message appended, or parked with a delay.
	Produced(topic string, partition int)
	// DuplicateDropped counts a message the idempotent append dropped: it was appended to
	// the partition within the window already.
	DuplicateDropped(topic string, partition int)
	// Trimmed counts the entries a background length trim removed, by kind (see
	// retention.Report).
	Trimmed(topic string, partition int, kind string, n int64)
	// GroupExpired counts a consumer group a background trim left out for its group expiry.
	GroupExpired(topic string, partition int, group string)
}

// partitionCounters are the counters of one partition, as a retention.Reporter.
type partitionCounters struct {
	c         Counters
	topic     string
	partition int
}

func (p partitionCounters) Trimmed(kind string, n int64) { p.c.Trimmed(p.topic, p.partition, kind, n) }

func (p partitionCounters) GroupExpired(group string) { p.c.GroupExpired(p.topic, p.partition, group) }
