package consume

import "github.com/streamq-dev/streamq/internal/retry"

// topicRules are the differences between consuming a topic and consuming its dead letters
// as a topic (DLQTopic), chosen once when a subscription's view is made: the components of
// a partition are built from them, and nothing else asks which of the two it reads.
type topicRules struct {
	// ownEntries: acks apply the AckDeletePolicy, the ack sets and the offloaded payloads,
	// and deliveries load offloaded payloads. A DLQ group only acks its dead letters: they
	// stay until DLQ retention or an operator removes them, and carry their payload inline.
	ownEntries bool
	// background: the partition's mover (due retries and delays) and housekeeper (retention,
	// payload sweeps) run. A DLQ's partitions have neither: the topic's lease holders do it.
	background bool
	// retries: a nack retries with backoff, then dead-letters; entries that are another
	// group's retries are skipped. On a DLQ a nack delivers the letter again after the
	// backoff (a DLQ has no DLQ), and a malformed letter is acked and left in place.
	retries bool
	// replays: an ack of a letter marked with Replay appends it back to its partition.
	replays bool
	// letters: the entries are dead letters. Each delivery carries its record
	// (DeadLetterFromCtx, and OriginalIDFromCtx from it), and a letter marked with Drop is
	// deleted from the DLQ when its handler finishes.
	letters bool
	// declaresGroup: the group is declared on the topic and checked against the group's
	// tombstone; a DLQ group keeps its name apart from the topic's groups.
	declaresGroup bool
}

func rulesFor(dlq bool) topicRules {
	if dlq {
		return topicRules{replays: true, letters: true}
	}
	return topicRules{ownEntries: true, background: true, retries: true, declaresGroup: true}
}

// decision is what the rules tell retry.Decide.
func (r topicRules) decision() retry.Rules {
	return retry.Rules{Retries: r.retries, Replays: r.replays, Letters: r.letters}
}
