package dashboard

import (
	"fmt"

	"github.com/streamq-dev/streamq/admin"
)

// heldView is what one group holds back in Redis's memory (admin.GroupMemory), and whether
// it is the cause: the group that holds back the most of every topic.
type heldView struct {
	Unacked      int64 `json:"unacked"`      // its lag and pending entries
	UnackedBytes int64 `json:"unackedBytes"` // about their memory (sampled entry sizes)
	Retries      int64 `json:"retries"`      // retries waiting in its retry sets
	RetryBytes   int64 `json:"retryBytes"`
	Cause        bool  `json:"cause"` // it holds back the most of any group
	// Text says it for a person: "holds back 400 unacked messages (~1.1 MiB), the most of
	// any group: Redis is full because of it".
	Text string `json:"text"`
}

// heldOf is what group holds back on topic by use; nil without use (memory is below the
// high-water mark).
func heldOf(use *admin.MemoryUse, topic, group string) *heldView {
	if use == nil {
		return nil
	}
	g, _ := use.Group(topic, group)
	v := &heldView{Unacked: g.Unacked, UnackedBytes: g.UnackedBytes, Retries: g.Retries, RetryBytes: g.RetryBytes}
	v.Cause = use.Cause != nil && use.Cause.Topic == topic && use.Cause.Group == group
	v.Text = "holds back " + holdText(g)
	switch {
	case v.Cause:
		v.Text += ", the most of any group: Redis's memory is held by it"
	case use.Cause != nil:
		v.Text += fmt.Sprintf("; group %s on topic %s holds back the most", use.Cause.Group, use.Cause.Topic)
	}
	return v
}
