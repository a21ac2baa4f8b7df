// Package member stores a group's members on a topic: the membership zset of heartbeat
// expiries and each member's capabilities (Membership, Live), its host and process and the
// group's last heartbeat (Beat), a static member's hold on its name (Instance), and whose a
// lease token is (TokenMember). The engine writes them (package lease); admin reads them.
package member

import (
	"context"
	_ "embed"
	"fmt"
	"os"
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

// Heartbeat marks self alive for the TTL and returns the live members sorted by name. It
// records this process's host and PID beside the capabilities, and the heartbeat as the
// group's latest (BeatsKey). A static member whose name another instance took over gets
// ErrSuperseded, and nothing is written.
func (m *Membership) Heartbeat(ctx context.Context) ([]Member, error) {
	self := m.member()
	beats, field := BeatsKey(m.membersKey)
	keys := []string{m.membersKey, m.capsKey, beats}
	args := []any{self.Name, m.ttl.Milliseconds(), self.caps(), processText(), field, BeatTTL.Milliseconds()}
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
// the heartbeat to expire, and records the leave as the group's latest beat (BeatsKey); a
// static member's record goes too, unless another instance holds the name (then nothing is
// touched: the membership entry is the successor's).
func (m *Membership) Leave(ctx context.Context) error {
	beats, field := BeatsKey(m.membersKey)
	keys := []string{m.membersKey, m.capsKey, beats}
	args := []any{m.member().Name, processText(), field, BeatTTL.Milliseconds()}
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

// BeatTTL is how long a group's latest beat (BeatsKey) outlives it: the membership zset and
// its capabilities expire 10 heartbeat TTLs after the last heartbeat, the beat a week after,
// so "no member seen since" is known long after the last member is gone.
const BeatTTL = 7 * 24 * time.Hour

// process is this process's PID and host as a heartbeat records them: "pid,host", the
// host's commas dropped (the capabilities are comma-separated).
var process = sync.OnceValue(func() string {
	host, _ := os.Hostname()
	return strconv.Itoa(os.Getpid()) + "," + strings.ReplaceAll(host, ",", "")
})

func processText() string { return process() }

// BeatsKey is the hash that keeps the latest beat of every group whose membership zset is
// beside it, and the field of membersKey's group: the members keys of a topic
// ("…:members:{T}:G", "…:dlqmembers:{T}:G") share the hash "…:members:{T}" (field G), in the
// topic's slot. No group name can make that key (a group is never empty).
func BeatsKey(membersKey string) (key, field string) {
	i := strings.LastIndex(membersKey, "}:")
	if i < 0 {
		return membersKey + ":beat", ""
	}
	return membersKey[:i+1], membersKey[i+2:]
}

// Beat is a member's heartbeat, or its leave, as the membership records it.
type Beat struct {
	Member string
	// Host and PID are the member's process (empty and 0 when a member of an older version
	// recorded no process).
	Host string
	PID  int
	// At is when the heartbeat was sent (or the member left), on the Redis server's clock; zero
	// when not recorded.
	At time.Time
	// Left: the member left (Leave) at At; otherwise At is its last heartbeat.
	Left bool
}

// Process is "host pid 4121", "pid 4121" without a host, or "" when not recorded.
func (b Beat) Process() string {
	switch {
	case b.PID == 0:
		return ""
	case b.Host == "":
		return "pid " + strconv.Itoa(b.PID)
	}
	return b.Host + " pid " + strconv.Itoa(b.PID)
}

// ParseCaps reads the process and heartbeat time a capabilities value records
// ("modulo,remainder,maxLeased,pid,host,sentMs"); an older member's "modulo,remainder,
// maxLeased" records none.
func ParseCaps(name, caps string) Beat {
	b := Beat{Member: name}
	parts := strings.Split(caps, ",")
	if len(parts) < 6 {
		return b
	}
	b.PID, _ = strconv.Atoi(parts[3])
	b.Host = strings.Join(parts[4:len(parts)-1], ",")
	b.At = unixMs(parts[len(parts)-1])
	return b
}

// beat kinds of a BeatsKey value.
const (
	beatAlive = "beat"
	beatLeft  = "left"
)

// ParseBeat reads a BeatsKey value ("sentMs,pid,host,beat|left,member"); false when it is
// none.
func ParseBeat(v string) (Beat, bool) {
	parts := strings.SplitN(v, ",", 5)
	if len(parts) < 5 || (parts[3] != beatAlive && parts[3] != beatLeft) || parts[4] == "" {
		return Beat{}, false
	}
	pid, _ := strconv.Atoi(parts[1])
	return Beat{Member: parts[4], Host: parts[2], PID: pid, At: unixMs(parts[0]), Left: parts[3] == beatLeft}, true
}

// EncodeBeat is b as a BeatsKey value records it (what ParseBeat reads).
func EncodeBeat(b Beat) string {
	kind := beatAlive
	if b.Left {
		kind = beatLeft
	}
	host := strings.ReplaceAll(b.Host, ",", "")
	return strconv.FormatInt(b.At.UnixMilli(), 10) + "," + strconv.Itoa(b.PID) + "," + host + "," + kind + "," + b.Member
}

// unixMs is the time of a Unix ms string; zero for what does not parse or is not positive.
func unixMs(v string) time.Time {
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// ForgetBeat removes the latest beat of membersKey's group (a deleted group), leaving the
// other groups' beats.
func ForgetBeat(ctx context.Context, rdb redis.Cmdable, membersKey string) error {
	key, field := BeatsKey(membersKey)
	if err := rdb.HDel(ctx, key, field).Err(); err != nil {
		return fmt.Errorf("forget the last beat of %s: %w", membersKey, err)
	}
	return nil
}
