package lease

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/script"
)

var (
	//go:embed lua/heartbeat.lua
	heartbeatSrc string
	//go:embed lua/leave.lua
	leaveSrc string
	//go:embed lua/live.lua
	liveSrc string

	heartbeatScript = script.New(heartbeatSrc)
	leaveScript     = script.New(leaveSrc)
	liveScript      = script.New(liveSrc)
)

// Member is one live member of a group on a topic, with what it may lease.
type Member struct {
	Name string
	// Modulo and Remainder: the member only leases partitions i with i % Modulo == Remainder
	// (Modulo 0: every partition).
	Modulo, Remainder int
	// MaxLeased caps the partitions it holds (0: no cap; NoLeases: none, the member is
	// full).
	MaxLeased int
}

// NoLeases is the MaxLeased of a member that may lease no partition at all (0 means no cap):
// a Subscriber whose MaxLeasedPartitions are all held by its subscriptions to other topics.
const NoLeases = -1

// Eligible reports whether m may lease partition p.
func (m Member) Eligible(p int) bool {
	return m.Modulo <= 0 || p%m.Modulo == m.Remainder%m.Modulo
}

func (m Member) caps() string {
	return fmt.Sprintf("%d,%d,%d", m.Modulo, m.Remainder, m.MaxLeased)
}

// ParseMember rebuilds a Member from its name and stored capabilities; bad fields read as 0
// (a MaxLeased of NoLeases is kept).
func ParseMember(name, caps string) Member {
	m := Member{Name: name}
	parts := strings.Split(caps, ",")
	field := func(i int) int {
		if i >= len(parts) {
			return 0
		}
		v, err := strconv.Atoi(parts[i])
		if err != nil || v < 0 {
			return 0
		}
		return v
	}
	m.Modulo, m.Remainder, m.MaxLeased = field(0), field(1), field(2)
	if len(parts) > 2 && parts[2] == strconv.Itoa(NoLeases) {
		m.MaxLeased = NoLeases
	}
	return m
}

// Membership heartbeats one member into a group's membership keys.
type Membership struct {
	rdb        redis.UniversalClient
	membersKey string
	capsKey    string
	ttl        time.Duration

	inst *Instance // a static member's hold on its name; nil for other members

	mu   sync.Mutex
	self Member
}

// NewMembership returns the membership of self in the group whose keys are given.
func NewMembership(rdb redis.UniversalClient, membersKey, capsKey string, self Member, ttl time.Duration) *Membership {
	return &Membership{rdb: rdb, membersKey: membersKey, capsKey: capsKey, self: self, ttl: ttl}
}

// Static makes self a static member held by inst (whose name must be self's): every
// heartbeat fails with ErrSuperseded once another instance holds the name (inst.Refresh
// renews the presence), and Leave removes inst's record. It returns m.
func (m *Membership) Static(inst *Instance) *Membership {
	m.inst = inst
	return m
}

// SetMaxLeased changes the cap the next heartbeats publish (0: no cap; NoLeases: none).
// Safe for concurrent use.
func (m *Membership) SetMaxLeased(n int) {
	m.mu.Lock()
	m.self.MaxLeased = n
	m.mu.Unlock()
}

func (m *Membership) member() Member {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.self
}

// Heartbeat marks self alive for the TTL and returns the live members sorted by name. A
// static member whose name another instance took over gets ErrSuperseded, and nothing is
// written.
func (m *Membership) Heartbeat(ctx context.Context) ([]Member, error) {
	self := m.member()
	keys, args := []string{m.membersKey, m.capsKey}, []any{self.Name, m.ttl.Milliseconds(), self.caps()}
	if m.inst != nil {
		keys, args = append(keys, m.inst.key), append(args, m.inst.id)
	}
	res, err := heartbeatScript.Run(ctx, m.rdb, keys, args...).Result()
	if err != nil {
		return nil, fmt.Errorf("heartbeat %s: %w", m.membersKey, err)
	}
	flat, ok := res.([]any)
	if !ok {
		return nil, fmt.Errorf("heartbeat %s as %s: %w", m.membersKey, self.Name, ErrSuperseded)
	}
	members := make([]Member, 0, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		name, _ := flat[i].(string)
		caps, _ := flat[i+1].(string)
		members = append(members, ParseMember(name, caps))
	}
	return members, nil
}

// Leave removes self from the membership at once, so others rebalance without waiting for
// the heartbeat to expire; a static member's record goes too, unless another instance holds
// the name (then nothing is touched: the membership entry is the successor's).
func (m *Membership) Leave(ctx context.Context) error {
	keys, args := []string{m.membersKey, m.capsKey}, []any{m.member().Name}
	if m.inst != nil {
		keys, args = append(keys, m.inst.key), append(args, m.inst.id)
	}
	if err := leaveScript.Run(ctx, m.rdb, keys, args...).Err(); err != nil {
		return fmt.Errorf("leave %s: %w", m.membersKey, err)
	}
	return nil
}

// Live reads the live members of the membership zsets keys (a group's Members or DLQMembers
// keys; all of one topic, so one hash slot): for each key, the members whose heartbeat
// expiry is after the Redis server's TIME, sorted. A key that does not exist, or is not a
// zset, has none. It reads in one script, on the node that runs the heartbeats, so the
// expiries are compared with the clock that wrote them.
func Live(ctx context.Context, rdb redis.Scripter, keys []string) ([][]string, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	res, err := liveScript.Run(ctx, rdb, keys).Slice()
	if err != nil {
		return nil, fmt.Errorf("read live members of %s: %w", keys[0], err)
	}
	if len(res) != len(keys) {
		return nil, fmt.Errorf("read live members of %s: %d replies for %d keys", keys[0], len(res), len(keys))
	}
	out := make([][]string, len(keys))
	for i, r := range res {
		names, _ := r.([]any)
		for _, n := range names {
			if s, ok := n.(string); ok {
				out[i] = append(out[i], s)
			}
		}
	}
	return out, nil
}
