package admin

import (
	"fmt"
	"time"

	"github.com/streamq-dev/streamq/internal/member"
)

// LastMember is the member of a group whose heartbeat, or leave, the group recorded last:
// every heartbeat records it (a member heartbeats every Membership.RebalanceInterval), kept a
// week after the last member is gone (member.BeatTTL).
type LastMember struct {
	Name string
	// Host and PID are its process ("" and 0 for a member of a streamq version that did not
	// record them).
	Host string
	PID  int
	// At is when it sent its last heartbeat or, when Left, when it left; on the Redis server's
	// clock. A member that crashed was alive at At and gone within one heartbeat interval.
	At   time.Time
	Left bool
}

// Process is "web-1 pid 4121" ("pid 4121" without a host; "" when not recorded).
func (m LastMember) Process() string {
	return member.Beat{Host: m.Host, PID: m.PID}.Process()
}

// String is "worker-1 (web-1 pid 4121)" or the name alone when no process is recorded.
func (m LastMember) String() string {
	if p := m.Process(); p != "" {
		return fmt.Sprintf("%s (%s)", m.Name, p)
	}
	return m.Name
}

func lastMemberOf(b *member.Beat) *LastMember {
	if b == nil {
		return nil
	}
	return &LastMember{Name: b.Member, Host: b.Host, PID: b.PID, At: b.At, Left: b.Left}
}
