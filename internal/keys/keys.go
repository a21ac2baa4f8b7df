// Package keys builds every Redis key streamq uses. All keys of one partition share the hash
// tag {T:p:I}, so any atomic step over a partition's keys stays in one Redis Cluster slot.
package keys

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Default key prefixes, kept from the seed specification.
const (
	DefaultStreamPrefix  = "stream:topic"
	DefaultControlPrefix = "streaming:mq"
)

// TombstoneTTL is how long a forced delete's tombstone stops members that were running.
const TombstoneTTL = 24 * time.Hour

// ErrInvalidName reports a topic, group or consumer name that would break the key layout.
var ErrInvalidName = errors.New("invalid name")

// Space builds keys under a data prefix (streams) and a control prefix (everything else).
type Space struct {
	Stream  string
	Control string
}

// New returns a Space, using the defaults for empty prefixes.
func New(streamPrefix, controlPrefix string) Space {
	if streamPrefix == "" {
		streamPrefix = DefaultStreamPrefix
	}
	if controlPrefix == "" {
		controlPrefix = DefaultControlPrefix
	}
	return Space{Stream: streamPrefix, Control: controlPrefix}
}

// Tag is the hash tag shared by all keys of partition p of topic t.
func Tag(t string, p int) string { return "{" + t + ":p:" + strconv.Itoa(p) + "}" }

// PartitionStream is the stream of partition p of topic t.
func (s Space) PartitionStream(t string, p int) string { return s.Stream + ":" + Tag(t, p) }

// DLQ is the dead-letter stream of partition p.
func (s Space) DLQ(t string, p int) string { return s.PartitionStream(t, p) + ":dlq" }

// Lease is the lease key of partition p for group g.
func (s Space) Lease(t string, p int, g string) string {
	return s.Control + ":lease:" + Tag(t, p) + ":" + g
}

// Retry is the retry zset of partition p for group g.
func (s Space) Retry(t string, p int, g string) string {
	return s.Control + ":retry:" + Tag(t, p) + ":" + g
}

// RetryItems is the hash of retry items beside Retry.
func (s Space) RetryItems(t string, p int, g string) string { return s.Retry(t, p, g) + ":items" }

// DelayItems is the hash of delayed items beside Delay.
func (s Space) DelayItems(t string, p int) string { return s.Delay(t, p) + ":items" }

// DLQLease is the lease key of partition p's DLQ when group g consumes it as a topic.
func (s Space) DLQLease(t string, p int, g string) string {
	return s.Control + ":dlqlease:" + Tag(t, p) + ":" + g
}

// DLQMembers is the membership zset of group g consuming the DLQ of topic t.
func (s Space) DLQMembers(t, g string) string { return s.Control + ":dlqmembers:{" + t + "}:" + g }

// Delay is the publish-time delay zset of partition p.
func (s Space) Delay(t string, p int) string { return s.Control + ":delay:" + Tag(t, p) }

// Commit is the commit-frontier hash of partition p.
func (s Space) Commit(t string, p int) string { return s.Control + ":commit:" + Tag(t, p) }

// Acks is the set of groups that acked entry id of partition p (all-groups-ack, payloads).
func (s Space) Acks(t string, p int, id string) string {
	return s.Control + ":acks:" + Tag(t, p) + ":" + id
}

// Payload is the key of an offloaded payload of partition p.
func (s Space) Payload(t string, p int, ref string) string {
	return s.Control + ":payload:" + Tag(t, p) + ":" + ref
}

// PayloadIndex is the zset of partition p's offloaded payloads: "id|ref" -> entry ms.
func (s Space) PayloadIndex(t string, p int) string { return s.Control + ":payloadidx:" + Tag(t, p) }

// Idempotency is the prefix of partition p's buckets of the message UUIDs appended within
// the Publisher's Idempotency.Window under ByUUID (see IdempotencyBucket).
func (s Space) Idempotency(t string, p int) string { return s.Control + ":idem:" + Tag(t, p) }

// IdempotencyBucket is bucket n of the UUIDs under prefix (Space.Idempotency): a hash UUID ->
// stream id of the appends in the n-th half window since the epoch.
func IdempotencyBucket(prefix string, n int64) string {
	return prefix + ":" + strconv.FormatInt(n, 10)
}

// Producers is the prefix of the producer records of partition p's group (Prefix + ":" +
// producer id, p the group's first partition): each a string "I:last gaps...,J:last"
// recording, per partition of the group, which sequence numbers the producer appended there
// (see internal/publish, appendseq.lua). It expires a window after the producer's last append.
func (s Space) Producers(t string, p int) string { return s.Control + ":producer:" + Tag(t, p) }

// Registry is the global set of topics.
func (s Space) Registry() string { return s.Control + ":topics:registry" }

// Meta is the topic metadata hash (field partitionCount).
func (s Space) Meta(t string) string { return s.Control + ":topic:{" + t + "}:meta" }

// Partitions is the set of a topic's partition stream keys.
func (s Space) Partitions(t string) string { return s.Control + ":topic:{" + t + "}:partitions" }

// Groups is the hash of the consumer groups declared on a topic (group -> start id): a
// Subscriber that joins a topic before it exists declares its group here, and whoever
// creates the topic's partitions creates the declared groups on them before the first append.
func (s Space) Groups(t string) string { return s.Control + ":topic:{" + t + "}:groups" }

// TrimLoss is the hash of partition p counting, per group, the entries a hard retention cap
// removed before the group acked them: "total:G" (cumulative) and "new:G" (not yet reported
// by a lease holder of G).
func (s Space) TrimLoss(t string, p int) string { return s.Control + ":trimloss:" + Tag(t, p) }

// TopicTombstone marks a topic an operator deleted by force (admin.DeleteTopic with Force)
// while members ran: those members stop instead of recreating it. A new Subscribe, Publisher
// registration or admin.CreateTopic clears it. It expires after TombstoneTTL.
func (s Space) TopicTombstone(t string) string { return s.Control + ":deleted:{" + t + "}" }

// GroupTombstone marks group g of topic t as deleted by force while members ran: they stop
// instead of recreating it. A new Subscribe of the group clears it; it expires after
// TombstoneTTL.
func (s Space) GroupTombstone(t, g string) string { return s.Control + ":deleted:{" + t + "}:" + g }

// Refused is the hash a Publisher refused for memory on topic t writes (internal/partition
// NoteRefused): "since" and "last", Unix ms on the server's clock, with a TTL refreshed while
// refusals go on, so that it clears itself once publishing works again.
func (s Space) Refused(t string) string { return s.Control + ":refused:{" + t + "}" }

// Members is the membership zset (consumer -> heartbeat expiry ms) of group g on topic t.
func (s Space) Members(t, g string) string { return s.Beats(t) + ":" + g }

// Beats is the hash (group -> its latest heartbeat or leave) beside the membership zsets of
// topic t's groups: member.BeatsKey of any of them.
func (s Space) Beats(t string) string { return s.Control + ":members:{" + t + "}" }

// MemberCaps is the hash (consumer -> capabilities) beside Members.
func (s Space) MemberCaps(t, g string) string { return s.Members(t, g) + ":caps" }

// MemberInstances is the hash (static member -> "instance|until ms|state") beside Members:
// which process holds each static member's name (see internal/member/lua/claim.lua).
func (s Space) MemberInstances(t, g string) string { return s.Members(t, g) + ":static" }

// MaxNameLength is the longest topic, group or consumer name, in bytes (Kafka's topic limit):
// each is part of several keys, and of every line an operator reads.
const MaxNameLength = 249

// ValidateName rejects names that would break the key layout: empty, longer than
// MaxNameLength, braces, whitespace or control characters. kind names the thing in the error ("topic", "consumer group", ...).
func ValidateName(kind, name string) error {
	if name == "" {
		return fmt.Errorf("%w: %s name is empty", ErrInvalidName, kind)
	}
	if len(name) > MaxNameLength {
		return fmt.Errorf("%w: %s name %q... is %d bytes long, more than %d", ErrInvalidName, kind, name[:32], len(name), MaxNameLength)
	}
	if strings.ContainsAny(name, "{}") {
		return fmt.Errorf("%w: %s name %q contains a brace, which would break Redis Cluster hash tags", ErrInvalidName, kind, name)
	}
	for _, r := range name {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return fmt.Errorf("%w: %s name %q contains a space or control character", ErrInvalidName, kind, name)
		}
	}
	return nil
}
