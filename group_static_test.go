package streamq_test

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

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/member"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// staticGrace is the StaticMemberGrace of the in-process static members (fastSub's LeaseTTL
// is 2s, its RebalanceInterval 150ms, its BlockTime 50ms: the shortest presence window, 300ms).
const staticGrace = 5 * time.Second

func staticTweak(c *streamq.SubscriberConfig) { c.Membership.StaticMemberGrace = staticGrace }

// tokenAt is a lease token seen from a time on ("" when the lease was free).
type tokenAt struct {
	at    time.Time
	token string
}

// leaseLog records every change of the lease tokens of a topic's partitions in a group,
// reading them all every 2ms: an owner that held a partition for one rebalance round is seen.
type leaseLog struct {
	mu      sync.Mutex
	changes [][]tokenAt // per partition, in time order
	stop    chan struct{}
	done    chan struct{}
}

func recordLeases(t *testing.T, client redis.UniversalClient, topic, group string, n int) *leaseLog {
	t.Helper()
	space := keys.New("", "")
	leaseKeys := make([]string, n)
	for p := range leaseKeys {
		leaseKeys[p] = space.Lease(topic, p, group)
	}
	l := &leaseLog{changes: make([][]tokenAt, n), stop: make(chan struct{}), done: make(chan struct{})}
	tokens, err := lease.Owners(context.Background(), client, leaseKeys)
	require.NoError(t, err)
	l.observe(time.Now(), tokens) // the state the test starts from
	go l.run(client, leaseKeys)
	t.Cleanup(l.close)
	return l
}

func (l *leaseLog) run(client redis.UniversalClient, leaseKeys []string) {
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

func (l *leaseLog) observe(now time.Time, tokens []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p, tok := range tokens {
		h := l.changes[p]
		if len(h) == 0 || h[len(h)-1].token != tok {
			l.changes[p] = append(h, tokenAt{now, tok})
		}
	}
}

func (l *leaseLog) close() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.done
}

// history is the tokens partition p had, in order.
func (l *leaseLog) history(p int) []tokenAt {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]tokenAt(nil), l.changes[p]...)
}

// current is the token of partition p at the last read.
func (l *leaseLog) current(p int) string {
	h := l.history(p)
	if len(h) == 0 {
		return ""
	}
	return h[len(h)-1].token
}

// tokenInstance is the process part of a token "member#instance.epoch".
func tokenInstance(token string) string {
	rest := strings.TrimPrefix(token, member.TokenMember(token)+"#")
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		return rest[:i]
	}
	return rest
}

// ownedBy is the partitions of n whose current token belongs to member name.
func (l *leaseLog) ownedBy(name string, n int) []int {
	var out []int
	for p := 0; p < n; p++ {
		if tok := l.current(p); tok != "" && member.TokenMember(tok) == name {
			out = append(out, p)
		}
	}
	return out
}

// instanceOf is the process holding every partition of parts (all must share it).
func (l *leaseLog) instanceOf(t *testing.T, parts []int) string {
	t.Helper()
	require.NotEmpty(t, parts)
	inst := tokenInstance(l.current(parts[0]))
	for _, p := range parts {
		require.Equal(t, inst, tokenInstance(l.current(p)), "partition %d", p)
	}
	return inst
}

// movedOn reports whether every partition of parts is held by member with a token of
// another process than oldInst.
func (l *leaseLog) movedOn(parts []int, name, oldInst string) bool {
	for _, p := range parts {
		tok := l.current(p)
		if tok == "" || member.TokenMember(tok) != name || tokenInstance(tok) == oldInst {
			return false
		}
	}
	return true
}

// assertTakenBackDirectly checks that each partition of parts went from process oldInst of
// member straight to another process of member: its lease was never free in between (the new
// process did not wait for it to expire) and no other member held it.
func (l *leaseLog) assertTakenBackDirectly(t *testing.T, parts []int, name, oldInst string) {
	t.Helper()
	for _, p := range parts {
		h := l.history(p)
		i := 0
		for i < len(h) && tokenInstance(h[i].token) != oldInst {
			i++
		}
		require.Less(t, i, len(h), "partition %d: the old process never held it: %v", p, h)
		var next []tokenAt
		for _, c := range h[i:] {
			if tokenInstance(c.token) != oldInst {
				next = append(next, c)
			}
		}
		require.NotEmpty(t, next, "partition %d was not taken back: %v", p, h)
		for _, c := range next {
			assert.NotEmpty(t, c.token, "partition %d: its lease was free before the new process took it (waited for expiry): %v", p, h)
			assert.Equal(t, name, member.TokenMember(c.token), "partition %d: held by another member meanwhile: %v", p, h)
		}
	}
}

// deliveries counts the deliveries of each message UUID over several consumers.
type deliveries struct {
	mu sync.Mutex
	n  map[string]int
}

func newDeliveries() *deliveries { return &deliveries{n: map[string]int{}} }

// consume acks every message of ch and counts it.
func (d *deliveries) consumeInto(ch <-chan *message.Message) {
	go func() {
		for m := range ch {
			d.mu.Lock()
			d.n[m.UUID]++
			d.mu.Unlock()
			m.Ack()
		}
	}()
}

func (d *deliveries) add(uuid string) {
	d.mu.Lock()
	d.n[uuid]++
	d.mu.Unlock()
}

// addAll adds the counts of o.
func (d *deliveries) addAll(o *deliveries) {
	o.mu.Lock()
	defer o.mu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	for u, n := range o.n {
		d.n[u] += n
	}
}

// missing is how many of uuids were never delivered; twice is how many were delivered more
// than once.
func (d *deliveries) counts(uuids []string) (missing, twice int) {
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

// publishSeq publishes count keyed messages over 48 keys and returns their UUIDs.
func publishSeq(t *testing.T, pub *streamq.Publisher, topic string, from, count int) []string {
	t.Helper()
	msgs := keyedMessages(from, count, 48)
	require.NoError(t, pub.Publish(topic, msgs...))
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.UUID
	}
	return out
}

// waitIdle waits d on a timer: long enough for the other members to run several rebalance
// rounds (what they would do with a partition they must not take).
func waitIdle(d time.Duration) { <-time.After(d) }

// TestStaticMemberTakesBackItsPartitionsAfterClose: member a of three static members on 12
// partitions closes (gracefully) and a new Subscriber with its name starts while messages
// keep coming: meanwhile b and c do not take a's partitions, the new process holds exactly
// a's partitions again, taken straight from the old process's parked leases, and every
// message is delivered exactly once (the Close flushed its acks).
func TestStaticMemberTakesBackItsPartitionsAfterClose(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, client redis.UniversalClient) {
		const topic, group, n = "static-close", "g", 12
		pub := newTestPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: n})
		got := newDeliveries()
		subs := map[string]*streamq.Subscriber{}
		for _, name := range []string{"a", "b", "c"} {
			sub, ch := subscribeMember(t, client, topic, group, name, n, staticTweak)
			subs[name] = sub
			got.consumeInto(ch)
		}
		require.Eventually(t, func() bool {
			return balanced(map[string]int{"a": 4, "b": 4, "c": 4})(countByMember(leaseOwners(t, client, topic, group, n)))
		}, 20*time.Second, 20*time.Millisecond)
		log := recordLeases(t, client, topic, group, n)
		uuids := publishSeq(t, pub, topic, 0, 240)
		require.Eventually(t, func() bool { m, _ := got.counts(uuids); return m == 0 }, 10*time.Second, 10*time.Millisecond)

		parts := log.ownedBy("a", n)
		require.Len(t, parts, 4)
		old := log.instanceOf(t, parts)
		require.NoError(t, subs["a"].Close())
		uuids = append(uuids, publishSeq(t, pub, topic, 240, 240)...) // a's wait for it
		waitIdle(5 * fastSub(client, group).Membership.RebalanceInterval)

		_, ch := subscribeMember(t, client, topic, group, "a", n, staticTweak)
		got.consumeInto(ch)
		require.Eventually(t, func() bool { return log.movedOn(parts, "a", old) }, 10*time.Second, 5*time.Millisecond,
			"the new process holds a's partitions")
		assert.Equal(t, parts, log.ownedBy("a", n), "and no other")
		log.assertTakenBackDirectly(t, parts, "a", old)
		require.Eventually(t, func() bool { m, _ := got.counts(uuids); return m == 0 }, 10*time.Second, 10*time.Millisecond)
		_, twice := got.counts(uuids)
		assert.Zero(t, twice, "a graceful restart delivers nothing twice")
	})
}

// twoClientBackends runs test on a single redis-server and on a 3-master cluster, giving it
// a way to make clients of its own (separate pools, as two processes would have).
func twoClientBackends(t *testing.T, test func(t *testing.T, newClient func() redis.UniversalClient)) {
	t.Run("single", func(t *testing.T) {
		srv := redistest.Start(t)
		test(t, func() redis.UniversalClient { return srv.Client(t) })
	})
	t.Run("cluster", func(t *testing.T) {
		c := redistest.StartCluster(t, 3, 0)
		test(t, func() redis.UniversalClient { return c.Client(t) })
	})
}

// TestStaticMemberNameInUse: a second Subscriber with the same static ConsumerName, on a
// client of its own, while the first one runs: its Subscribe returns ErrConsumerNameInUse
// and it never holds a partition (every lease keeps the first one's token); the first keeps
// delivering. Once the first one closed, the second subscribes and takes its partitions at
// once.
func TestStaticMemberNameInUse(t *testing.T) {
	t.Parallel()
	twoClientBackends(t, func(t *testing.T, newClient func() redis.UniversalClient) {
		const topic, group, n = "static-dup", "g", 4
		first := newClient()
		pub := newTestPublisher(t, streamq.PublisherConfig{Client: first, DefaultPartitionCount: n})
		sub1, ch1 := subscribeMember(t, first, topic, group, "dup", n, staticTweak)
		require.Eventually(t, func() bool { return countByMember(leaseOwners(t, first, topic, group, n))["dup"] == n },
			10*time.Second, 10*time.Millisecond)
		log := recordLeases(t, first, topic, group, n)
		all := make([]int, n)
		for p := range all {
			all[p] = p
		}
		inst := log.instanceOf(t, all)

		cfg := fastSub(newClient(), group)
		cfg.Membership.ConsumerName, cfg.DefaultPartitionCount = "dup", n
		staticTweak(&cfg)
		sub2 := newTestSubscriber(t, cfg)
		_, err := sub2.Subscribe(context.Background(), topic)
		require.ErrorIs(t, err, streamq.ErrConsumerNameInUse)
		t.Logf("refused: %v", err)

		publishKeyed(t, pub, topic, 0, 8, 8)
		for range 8 {
			receiveOne(t, ch1, 10*time.Second).Ack()
		}
		for p := range all {
			for _, c := range log.history(p) {
				assert.Equal(t, inst, tokenInstance(c.token), "partition %d changed hands: %v", p, log.history(p))
			}
		}
		assert.Zero(t, sub2.Stats().Delivered)

		require.NoError(t, sub1.Close())
		ch2, err := sub2.Subscribe(context.Background(), topic)
		require.NoError(t, err, "the name is free once its process closed")
		publishKeyed(t, pub, topic, 8, 9, 8)
		receiveOne(t, ch2, 10*time.Second).Ack()
		require.Eventually(t, func() bool { return log.movedOn(all, "dup", inst) }, 10*time.Second, 5*time.Millisecond)
		log.assertTakenBackDirectly(t, all, "dup", inst)
	})
}

// TestStaticMemberLeaveOnClose: a static member closed after LeaveOnClose hands its
// partitions over like any member: its leases are released when Close returns, the other
// member takes them, and its name is free at once.
func TestStaticMemberLeaveOnClose(t *testing.T) {
	t.Parallel()
	_, client := startRedis(t)
	const topic, group, n = "static-leave", "g", 4
	a, _ := subscribeMember(t, client, topic, group, "a", n, staticTweak)
	got := newDeliveries()
	_, chB := subscribeMember(t, client, topic, group, "b", n, staticTweak)
	got.consumeInto(chB)
	require.Eventually(t, func() bool {
		return balanced(map[string]int{"a": 2, "b": 2})(countByMember(leaseOwners(t, client, topic, group, n)))
	}, 10*time.Second, 10*time.Millisecond)
	a.LeaveOnClose()
	require.NoError(t, a.Close())
	assert.NotContains(t, leaseOwners(t, client, topic, group, n), "a", "a's leases were released, not kept for the grace")
	require.Eventually(t, func() bool { return countByMember(leaseOwners(t, client, topic, group, n))["b"] == n },
		10*time.Second, 10*time.Millisecond, "b takes a's partitions")
	c, err := member.NewInstance(client, keys.New("", "").MemberInstances(topic, group), "a", "other", time.Second, time.Minute).
		Claim(context.Background())
	require.NoError(t, err)
	assert.True(t, c.Taken, "the name is free")
}

// firstTokenOf is when partition p first had a token of process inst.
func (l *leaseLog) firstTokenOf(p int, inst string) (time.Time, bool) {
	for _, c := range l.history(p) {
		if c.token != "" && tokenInstance(c.token) == inst {
			return c.at, true
		}
	}
	return time.Time{}, false
}
