package retention

import (
	"strconv"

	"github.com/streamq-dev/streamq/internal/partition"
)

// Policies, as a topic's metadata records them: "acked" removes only entries every registered
// group acked, "hard" removes the others too (counted).
const (
	PolicyAcked = "acked"
	PolicyHard  = "hard"
)

// Length is a topic's length retention: what its Publishers are configured with, which they
// record in the topic's metadata for the lease holders of its partitions.
type Length struct {
	MaxLen int64 // -1: off
	Exact  bool
	Hard   bool
}

// Settings are the metadata fields that record l (field, value pairs).
func (l Length) Settings() []string {
	exact, policy := "0", PolicyAcked
	if l.Exact {
		exact = "1"
	}
	if l.Hard {
		policy = PolicyHard
	}
	return []string{partition.FieldMaxLen, strconv.FormatInt(l.MaxLen, 10), partition.FieldExactLen, exact,
		partition.FieldTrimPolicy, policy}
}

// Recorded is the length retention in a topic's metadata: the default MaxLen under the acked
// policy when no publisher recorded one (a topic created by an operator or a Subscriber).
func Recorded(m partition.Meta) Length {
	l := Length{MaxLen: m.MaxLen, Exact: m.ExactLen, Hard: m.TrimPolicy == PolicyHard}
	if l.MaxLen == 0 {
		l.MaxLen = partition.DefaultMaxLen
	}
	return l
}

// Rule is the rule of one length trim (none when off).
func (l Length) Rule() Rule {
	return Rule{MaxLen: max(l.MaxLen, 0), Exact: l.Exact, Hard: l.Hard}
}
