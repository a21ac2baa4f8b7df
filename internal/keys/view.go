package keys

import (
	"fmt"
	"strings"
)

// DLQSuffix ends the name of a topic's dead-letter queue consumed as a topic. Topic names
// ending with it are reserved.
const DLQSuffix = ":dlq"

// View is a topic as one subscription reads it: the topic's partitions, or its dead-letter
// streams consumed as a topic. It names every key that subscription uses.
type View struct {
	Name  string // as subscribed
	Topic string // the base topic
	DLQ   bool
	space Space
}

// NewView is the view of name, a topic or a topic's DLQ name (ErrInvalidName when neither).
func (s Space) NewView(name string) (View, error) {
	base, isDLQ := strings.CutSuffix(name, DLQSuffix)
	if err := ValidateName("topic", base); err != nil {
		return View{}, err
	}
	if strings.HasSuffix(base, DLQSuffix) {
		return View{}, fmt.Errorf("%w: topic %q: a DLQ has no DLQ", ErrInvalidName, name)
	}
	return View{Name: name, Topic: base, DLQ: isDLQ, space: s}, nil
}

// ValidateTopic checks a topic to publish to: a valid name, and not a DLQ name.
func ValidateTopic(topic string) error {
	if err := ValidateName("topic", topic); err != nil {
		return err
	}
	if strings.HasSuffix(topic, DLQSuffix) {
		return fmt.Errorf("%w: topic %q ends with %q, reserved for dead-letter queues", ErrInvalidName, topic, DLQSuffix)
	}
	return nil
}

// Space is the keyspace of the view.
func (v View) Space() Space { return v.space }

// Partition is every key group uses on partition p of the view.
func (v View) Partition(p int, group string) Partition {
	return v.space.Partition(v.Topic, p, group, v.DLQ)
}

// Stream is what partition p of the view reads.
func (v View) Stream(p int) string {
	if v.DLQ {
		return v.space.DLQ(v.Topic, p)
	}
	return v.space.PartitionStream(v.Topic, p)
}

// Lease is group's lease on partition p of the view.
func (v View) Lease(p int, group string) string {
	if v.DLQ {
		return v.space.DLQLease(v.Topic, p, group)
	}
	return v.space.Lease(v.Topic, p, group)
}

// Commit is the commit-frontier hash of partition p's stream in the view.
func (v View) Commit(p int) string {
	if v.DLQ {
		return v.space.DLQCommit(v.Topic, p)
	}
	return v.space.Commit(v.Topic, p)
}

// Members are the membership zset and the capabilities hash of group on the view.
func (v View) Members(group string) (members, caps string) {
	if v.DLQ {
		return v.space.DLQMembers(v.Topic, group), v.space.DLQMemberCaps(v.Topic, group)
	}
	return v.space.Members(v.Topic, group), v.space.MemberCaps(v.Topic, group)
}

// Instances is the hash of the static members' processes beside the view's membership.
func (v View) Instances(group string) string {
	if v.DLQ {
		return v.space.DLQMemberInstances(v.Topic, group)
	}
	return v.space.MemberInstances(v.Topic, group)
}

// Pause is the key an operator's pause of group on the view sets (admin.PauseGroup).
func (v View) Pause(group string) string {
	if v.DLQ {
		return v.space.DLQGroupPause(v.Topic, group)
	}
	return v.space.GroupPause(v.Topic, group)
}
