package streamqtest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/member"
)

// TokenAt is a lease token seen from a time on ("" when the lease was free).
type TokenAt struct {
	At    time.Time
	Token string
}

// LeaseLog records every change of the lease tokens of a topic's partitions in a group,
// reading them all every 2ms: an owner that held a partition for one rebalance round is seen.
type LeaseLog struct {
	mu      sync.Mutex
	changes [][]TokenAt // per partition, in time order
	stop    chan struct{}
	done    chan struct{}
}

// RecordLeases starts a LeaseLog of the n partitions of topic in group; it stops when the test
// ends.
func RecordLeases(t *testing.T, client redis.UniversalClient, topic, group string, n int) *LeaseLog {
	t.Helper()
	space := keys.New("", "")
	leaseKeys := make([]string, n)
	for p := range leaseKeys {
		leaseKeys[p] = space.Lease(topic, p, group)
	}
	l := &LeaseLog{changes: make([][]TokenAt, n), stop: make(chan struct{}), done: make(chan struct{})}
	tokens, err := lease.Owners(context.Background(), client, leaseKeys)
	require.NoError(t, err)
	l.observe(time.Now(), tokens) // the state the test starts from
	go l.run(client, leaseKeys)
	t.Cleanup(l.close)
	return l
}

func (l *LeaseLog) run(client redis.UniversalClient, leaseKeys []string) {
	defer close(l.done)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		if tokens, err := lease.Owners(context.Background(), client, leaseKeys); err == nil {
			l.observe(time.Now(), tokens)
		}
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
	}
}

func (l *LeaseLog) observe(now time.Time, tokens []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p, tok := range tokens {
		h := l.changes[p]
		if len(h) == 0 || h[len(h)-1].Token != tok {
			l.changes[p] = append(h, TokenAt{now, tok})
		}
	}
}

func (l *LeaseLog) close() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.done
}

// History is the tokens partition p had, in order.
func (l *LeaseLog) History(p int) []TokenAt {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]TokenAt(nil), l.changes[p]...)
}

// Current is the token of partition p at the last read.
func (l *LeaseLog) Current(p int) string {
	h := l.History(p)
	if len(h) == 0 {
		return ""
	}
	return h[len(h)-1].Token
}

// TokenInstance is the process part of a token "member#instance.epoch".
func TokenInstance(token string) string {
	rest := strings.TrimPrefix(token, member.TokenMember(token)+"#")
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		return rest[:i]
	}
	return rest
}

// OwnedBy is the partitions of n whose current token belongs to member name.
func (l *LeaseLog) OwnedBy(name string, n int) []int {
	var out []int
	for p := 0; p < n; p++ {
		if tok := l.Current(p); tok != "" && member.TokenMember(tok) == name {
			out = append(out, p)
		}
	}
	return out
}

// InstanceOf is the process holding every partition of parts (all must share it).
func (l *LeaseLog) InstanceOf(t *testing.T, parts []int) string {
	t.Helper()
	require.NotEmpty(t, parts)
	inst := TokenInstance(l.Current(parts[0]))
	for _, p := range parts {
		require.Equal(t, inst, TokenInstance(l.Current(p)), "partition %d", p)
	}
	return inst
}

// MovedOn reports whether every partition of parts is held by member with a token of
// another process than oldInst.
func (l *LeaseLog) MovedOn(parts []int, name, oldInst string) bool {
	for _, p := range parts {
		tok := l.Current(p)
		if tok == "" || member.TokenMember(tok) != name || TokenInstance(tok) == oldInst {
			return false
		}
	}
	return true
}

// AssertTakenBackDirectly checks that each partition of parts went from process oldInst of
// member straight to another process of member: its lease was never free in between (the new
// process did not wait for it to expire) and no other member held it.
func (l *LeaseLog) AssertTakenBackDirectly(t *testing.T, parts []int, name, oldInst string) {
	t.Helper()
	for _, p := range parts {
		h := l.History(p)
		i := 0
		for i < len(h) && TokenInstance(h[i].Token) != oldInst {
			i++
		}
		require.Less(t, i, len(h), "partition %d: the old process never held it: %v", p, h)
		var next []TokenAt
		for _, c := range h[i:] {
			if TokenInstance(c.Token) != oldInst {
				next = append(next, c)
			}
		}
		require.NotEmpty(t, next, "partition %d was not taken back: %v", p, h)
		for _, c := range next {
			assert.NotEmpty(t, c.Token, "partition %d: its lease was free before the new process took it (waited for expiry): %v", p, h)
			assert.Equal(t, name, member.TokenMember(c.Token), "partition %d: held by another member meanwhile: %v", p, h)
		}
	}
}

// Deliveries counts the deliveries of each message UUID over several consumers.
type Deliveries struct {
	mu sync.Mutex
	n  map[string]int
}

// NewDeliveries is an empty Deliveries.
func NewDeliveries() *Deliveries { return &Deliveries{n: map[string]int{}} }

// ConsumeInto acks every message of ch and counts it, until ch closes.
func (d *Deliveries) ConsumeInto(ch <-chan *message.Message) {
	go func() {
		for m := range ch {
			d.mu.Lock()
			d.n[m.UUID]++
			d.mu.Unlock()
			m.Ack()
		}
	}()
}

// Add counts one delivery of uuid.
func (d *Deliveries) Add(uuid string) {
	d.mu.Lock()
	d.n[uuid]++
	d.mu.Unlock()
}

// AddAll adds the counts of o.
func (d *Deliveries) AddAll(o *Deliveries) {
	o.mu.Lock()
	defer o.mu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	for u, n := range o.n {
		d.n[u] += n
	}
}

// Counts tells how many of uuids were never delivered (missing) and how many more than once
// (twice).
func (d *Deliveries) Counts(uuids []string) (missing, twice int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, u := range uuids {
		switch n := d.n[u]; {
		case n == 0:
			missing++
		case n > 1:
			twice++
		}
	}
	return missing, twice
}

// WaitIdle waits d on a timer: long enough for the other members to run several rebalance
// rounds (what they would do with a partition they must not take).
func WaitIdle(d time.Duration) { <-time.After(d) }

// FirstTokenOf is when partition p first had a token of process inst.
func (l *LeaseLog) FirstTokenOf(p int, inst string) (time.Time, bool) {
	for _, c := range l.History(p) {
		if c.Token != "" && TokenInstance(c.Token) == inst {
			return c.At, true
		}
	}
	return time.Time{}, false
}
