package streamq

import (
	"fmt"
	"strings"

	"github.com/streamq-dev/streamq/internal/keys"
)

// DLQSuffix ends the Watermill topic name of a topic's dead-letter queue. Topic names ending
// with it are reserved.
const DLQSuffix = ":dlq"

// DLQTopic is the topic to Subscribe to for the dead letters of topic: every partition's DLQ,
// with the same leases, groups and ordering as a normal topic.
func DLQTopic(topic string) string { return topic + DLQSuffix }

// view maps a subscribed topic name to keys and rules: a topic's partitions, or its DLQ
// streams consumed as a topic.
type view struct {
	name  string // as subscribed
	topic string // the base topic
	dlq   bool
	rules topicRules
	space keys.Space
}

func newView(space keys.Space, name string) (view, error) {
	base, isDLQ := strings.CutSuffix(name, DLQSuffix)
	if err := keys.ValidateName("topic", base); err != nil {
		return view{}, err
	}
	if strings.HasSuffix(base, DLQSuffix) {
		return view{}, fmt.Errorf("%w: topic %q: a DLQ has no DLQ", ErrInvalidName, name)
	}
	return view{name: name, topic: base, dlq: isDLQ, rules: rulesFor(isDLQ), space: space}, nil
}

// partition is every key group uses on partition p of the view.
func (v view) partition(p int, group string) keys.Partition {
	return v.space.Partition(v.topic, p, group, v.dlq)
}

// stream is what partition p of the view reads.
func (v view) stream(p int) string {
	if v.dlq {
		return v.space.DLQ(v.topic, p)
	}
	return v.space.PartitionStream(v.topic, p)
}

func (v view) lease(p int, group string) string {
	if v.dlq {
		return v.space.DLQLease(v.topic, p, group)
	}
	return v.space.Lease(v.topic, p, group)
}

// commit is the commit-frontier hash of partition p's stream in this view.
func (v view) commit(p int) string {
	if v.dlq {
		return v.space.DLQCommit(v.topic, p)
	}
	return v.space.Commit(v.topic, p)
}

func (v view) members(group string) (string, string) {
	if v.dlq {
		return v.space.DLQMembers(v.topic, group), v.space.DLQMemberCaps(v.topic, group)
	}
	return v.space.Members(v.topic, group), v.space.MemberCaps(v.topic, group)
}

// instances is the hash of the static members' processes beside the view's membership.
func (v view) instances(group string) string {
	if v.dlq {
		return v.space.DLQMemberInstances(v.topic, group)
	}
	return v.space.MemberInstances(v.topic, group)
}

// validateTopic checks a topic to publish to: a valid name, and not a DLQ name.
func validateTopic(topic string) error {
	if err := keys.ValidateName("topic", topic); err != nil {
		return err
	}
	if strings.HasSuffix(topic, DLQSuffix) {
		return fmt.Errorf("%w: topic %q ends with %q, reserved for dead-letter queues", ErrInvalidName, topic, DLQSuffix)
	}
	return nil
}
