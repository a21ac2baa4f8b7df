package scenario_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/chaos"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/member"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// onChildBackends runs test on a single redis-server and on a 3-master cluster, with the
// addresses a child process connects to and a client of the test's own.
func onChildBackends(t *testing.T, test func(t *testing.T, addrs []string, client redis.UniversalClient)) {
	t.Run("single", func(t *testing.T) {
		srv := redistest.Start(t)
		test(t, []string{srv.Addr()}, srv.Client(t))
	})
	t.Run("cluster", func(t *testing.T) {
		c := redistest.StartCluster(t, 3, 0)
		test(t, c.Addrs(), c.Client(t))
	})
}

// staticFleet is the fixture of the static member kill tests: static members b and c in this
// process (or only b) and a in a child process, balanced over the topic's 12 partitions,
// every lease change recorded, and a publisher.
type staticFleet struct {
	addrs  []string
	client redis.UniversalClient
	topic  string
	pub    *streamq.Publisher
	got    *streamqtest.Deliveries // b's and c's
	log    *streamqtest.LeaseLog
	a      *childProc

	mu    sync.Mutex
	uuids []string // every message published
}

func startStaticFleet(t *testing.T, addrs []string, client redis.UniversalClient, topic string) *staticFleet {
	t.Helper()
	return startStaticFleetTimed(t, addrs, client, topic, "", "b", "c")
}

// startStaticFleetTimed is startStaticFleet with the times staticTimings[times] and the
// in-process members others.
func startStaticFleetTimed(t *testing.T, addrs []string, client redis.UniversalClient, topic, times string, others ...string) *staticFleet {
	t.Helper()
	f := &staticFleet{addrs: addrs, client: client, topic: topic, got: streamqtest.NewDeliveries()}
	f.pub = streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: staticPartitions})
	share := map[string]int{"a": staticPartitions / (len(others) + 1)}
	for _, name := range others {
		_, ch := streamqtest.SubscribeMember(t, client, topic, staticGroup, name, staticPartitions, staticTimings[times])
		f.got.ConsumeInto(ch)
		share[name] = share["a"]
	}
	f.a = startStaticChildTimed(t, addrs, topic, "a", true, times)
	require.Eventually(t, func() bool {
		return streamqtest.Balanced(share)(streamqtest.CountByMember(streamqtest.LeaseOwners(t, client, topic, staticGroup, staticPartitions)))
	}, 60*time.Second, 20*time.Millisecond)
	f.log = streamqtest.RecordLeases(t, client, topic, staticGroup, staticPartitions)
	return f
}

// traffic publishes 20 messages over 48 keys every 50ms until the returned stop is called.
func (f *staticFleet) traffic(t *testing.T) (stop func()) {
	t.Helper()
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for seq := 0; ; seq += 20 {
			msgs := streamqtest.KeyedMessages(seq, 20, 48)
			if err := f.pub.Publish(f.topic, msgs...); err != nil {
				t.Errorf("publish: %v", err)
				return
			}
			f.mu.Lock()
			for _, m := range msgs {
				f.uuids = append(f.uuids, m.UUID)
			}
			f.mu.Unlock()
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			close(quit)
			<-done
		})
	}
	t.Cleanup(stop) // before the publisher closes: cleanups run last first
	return stop
}

// publishHeld publishes a message child a keeps unacked on each partition of parts and waits
// until it holds them all.
func (f *staticFleet) publishHeld(t *testing.T, parts []int) []string {
	t.Helper()
	msgs := holdMessages(parts)
	require.NoError(t, f.pub.Publish(f.topic, msgs...))
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.UUID
	}
	f.mu.Lock()
	f.uuids = append(f.uuids, out...)
	f.mu.Unlock()
	require.Eventually(t, func() bool { return countEvents(t, f.a, "holding") == len(parts) }, 10*time.Second, 10*time.Millisecond)
	return out
}

// assertAllHandled waits until every message published was delivered (by b, c or one of the
// children) and nothing is pending in the group any more.
func (f *staticFleet) assertAllHandled(t *testing.T, children ...*childProc) {
	t.Helper()
	f.mu.Lock()
	uuids := append([]string(nil), f.uuids...)
	f.mu.Unlock()
	space := keys.New("", "")
	require.Eventually(t, func() bool {
		all := streamqtest.NewDeliveries()
		all.AddAll(f.got)
		for _, c := range children {
			for _, e := range childDeliveries(t, c) {
				all.Add(e.UUID)
			}
		}
		missing, _ := all.Counts(uuids)
		return missing == 0
	}, 30*time.Second, 50*time.Millisecond, "every message is delivered")
	require.Eventually(t, func() bool {
		var n int64
		for p := 0; p < staticPartitions; p++ {
			n += streamqtest.GroupPending(t, f.client, space.PartitionStream(f.topic, p), staticGroup)
		}
		return n == 0
	}, 30*time.Second, 50*time.Millisecond, "every message is acked")
}

// TestStaticMemberKilledTakesBackItsPartitions: static member a (a child process holding one
// message unacked on each of its 4 partitions, more read behind them) is SIGKILLed under
// continuous traffic and started again at once. The new process holds the same 4 partitions,
// taken straight from the dead process's leases (never free, never another member's), in
// its first rebalance round once it has the name; it delivers the held messages again and
// every message is handled.
func TestStaticMemberKilledTakesBackItsPartitions(t *testing.T) {
	t.Parallel()
	onChildBackends(t, func(t *testing.T, addrs []string, client redis.UniversalClient) {
		f := startStaticFleet(t, addrs, client, "static-kill")
		stop := f.traffic(t)
		parts := f.log.OwnedBy("a", staticPartitions)
		require.Len(t, parts, 4)
		old := f.log.InstanceOf(t, parts)
		held := f.publishHeld(t, parts)
		streamqtest.WaitIdle(200 * time.Millisecond) // entries behind the held ones are read too

		f.a.kill(t)
		killed := time.Now()
		a2 := startStaticChild(t, addrs, f.topic, "a", false)
		subscribed := time.Unix(0, a2.waitEvent(t, "subscribed", 20*time.Second).T)
		require.Eventually(t, func() bool { return f.log.MovedOn(parts, "a", old) }, 20*time.Second, 5*time.Millisecond)
		f.log.AssertTakenBackDirectly(t, parts, "a", old)
		assert.Equal(t, parts, f.log.OwnedBy("a", staticPartitions), "the same partitions, no other")
		var cfg streamq.SubscriberConfig
		staticTimes(&cfg)
		for _, p := range parts {
			at, _ := f.log.FirstTokenOf(p, streamqtest.TokenInstance(f.log.Current(p)))
			assert.Less(t, at.Sub(subscribed), cfg.Membership.RebalanceInterval, "partition %d taken back in the first round", p)
			t.Logf("partition %d: held again %s after the kill, %s after Subscribe returned", p,
				at.Sub(killed).Round(time.Millisecond), at.Sub(subscribed).Round(time.Millisecond))
		}

		stop()
		f.assertAllHandled(t, f.a, a2)
		assertDeliveredAgainAndQuit(t, a2, held)
	})
}

// TestStaticMemberRestartedHoldsItsPartitionsWithinARebalanceInterval: static member a (a
// child process holding one message unacked on each of its 6 partitions, beside member b) is
// SIGKILLed under continuous traffic and started again at once, with a RebalanceInterval of
// 3s. The new process holds all of a's partitions again within one RebalanceInterval of its
// start: it waits for the dead process's presence to run out (a window of 2.25s, less the
// time the dead one was already silent; the kill comes right after a's last rebalance round,
// which falls on one of its refreshes: about the longest wait) instead of the old three
// RebalanceIntervals, not less, and takes the partitions in its first round. They go
// straight from the dead process to the new one (never free, never b's), and every message,
// the held ones again, is handled.
func TestStaticMemberRestartedHoldsItsPartitionsWithinARebalanceInterval(t *testing.T) {
	t.Parallel()
	onChildBackends(t, func(t *testing.T, addrs []string, client redis.UniversalClient) {
		f := startStaticFleetTimed(t, addrs, client, "static-restart", "slow", "b")
		stop := f.traffic(t)
		parts := f.log.OwnedBy("a", staticPartitions)
		require.Len(t, parts, staticPartitions/2)
		old := f.log.InstanceOf(t, parts)
		held := f.publishHeld(t, parts)

		f.a.kill(t)
		gone := presenceGone(t, client, f.topic, "a")
		launched := time.Now()
		a2 := startStaticChildTimed(t, addrs, f.topic, "a", false, "slow")
		require.Eventually(t, func() bool { return f.log.MovedOn(parts, "a", old) }, 20*time.Second, 5*time.Millisecond)
		f.log.AssertTakenBackDirectly(t, parts, "a", old)
		assert.Equal(t, parts, f.log.OwnedBy("a", staticPartitions), "the same partitions, no other")
		f.assertHeldAgainInTime(t, parts, a2, launched, gone)
		stop()
		f.assertAllHandled(t, f.a, a2)
		assertDeliveredAgainAndQuit(t, a2, held)
	})
}

// assertHeldAgainInTime checks when the restarted process a2, launched then, held each
// partition of parts again, with staticSlowTimes: not before the killed process's presence
// ran out (gone), within one RebalanceInterval of the start of a2's code, and within one
// RebalanceInterval and a second (for starting a process on a busy machine) of its launch.
func (f *staticFleet) assertHeldAgainInTime(t *testing.T, parts []int, a2 *childProc, launched, gone time.Time) {
	t.Helper()
	started := time.Unix(0, a2.waitEvent(t, "start", time.Second).T)
	subscribed := time.Unix(0, a2.waitEvent(t, "subscribed", time.Second).T)
	var cfg streamq.SubscriberConfig
	staticSlowTimes(&cfg)
	t.Logf("the killed process's presence ran out %s after the launch (a window of %s)", gone.Sub(launched), lease.PresenceWindow(lease.Config{RebalanceInterval: cfg.Membership.RebalanceInterval, LeaseTTL: cfg.Membership.LeaseTTL}, 100*time.Millisecond))
	for _, p := range parts {
		at, _ := f.log.FirstTokenOf(p, streamqtest.TokenInstance(f.log.Current(p)))
		t.Logf("partition %d: held again %s after the process was launched, %s after it started, %s after Subscribe returned", p,
			at.Sub(launched).Round(time.Millisecond), at.Sub(started).Round(time.Millisecond), at.Sub(subscribed).Round(time.Millisecond))
		assert.True(t, at.After(gone.Add(-10*time.Millisecond)), "partition %d held again before the killed process's presence ran out", p)
		assert.Less(t, at.Sub(started), cfg.Membership.RebalanceInterval, "partition %d held again within a RebalanceInterval of the start", p)
		assert.Less(t, at.Sub(launched), cfg.Membership.RebalanceInterval+time.Second,
			"partition %d held again within a RebalanceInterval of the launch, with a second to start a process", p)
	}
}

// presenceGone is when member's record in the group's instances hash says its process's
// presence runs out. The record holds the server's clock in milliseconds; the servers of
// these tests run on this machine, so that is this process's clock too (the time the test
// took to ask for it does not move it).
func presenceGone(t *testing.T, client redis.UniversalClient, topic, member string) time.Time {
	t.Helper()
	rec, err := client.HGet(context.Background(), keys.New("", "").MemberInstances(topic, staticGroup), member).Result()
	require.NoError(t, err)
	fields := strings.Split(rec, "|")
	require.Len(t, fields, 3, rec)
	return time.UnixMilli(int64(atoi(t, fields[1])))
}

// TestStaticMemberKilledPastGraceIsReplaced: static member a is SIGKILLed and does not come
// back within its grace: b and c take its partitions once its leases expired (not before
// the grace), as any member's; started again later, it gets its share back by rebalancing.
// Nothing is lost.
func TestStaticMemberKilledPastGraceIsReplaced(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	f := startStaticFleet(t, []string{srv.Addr()}, srv.Client(t), "static-gone")
	stop := f.traffic(t)
	parts := f.log.OwnedBy("a", staticPartitions)
	require.Len(t, parts, 4)
	old := f.log.InstanceOf(t, parts)
	f.a.kill(t)
	killed := time.Now()

	require.Eventually(t, func() bool {
		return len(f.log.OwnedBy("b", staticPartitions))+len(f.log.OwnedBy("c", staticPartitions)) == staticPartitions
	}, 30*time.Second, 10*time.Millisecond, "b and c take over")
	var cfg streamq.SubscriberConfig
	staticTimes(&cfg)
	for _, p := range parts {
		h := f.log.History(p)
		var next []streamqtest.TokenAt
		for _, c := range h {
			if c.Token != "" && streamqtest.TokenInstance(c.Token) != old {
				next = append(next, c)
			}
		}
		require.NotEmpty(t, next, "partition %d: %v", p, h)
		assert.Contains(t, []string{"b", "c"}, member.TokenMember(next[0].Token))
		assert.GreaterOrEqual(t, next[0].At.Sub(killed), cfg.Membership.StaticMemberGrace-cfg.Membership.RenewInterval,
			"partition %d was taken before the grace ended (its lease expired first): %v", p, h)
	}

	a2 := startStaticChild(t, f.addrs, f.topic, "a", false)
	require.Eventually(t, func() bool {
		return streamqtest.Balanced(map[string]int{"a": 4, "b": 4, "c": 4})(streamqtest.CountByMember(streamqtest.LeaseOwners(t, f.client, f.topic, staticGroup, staticPartitions)))
	}, 30*time.Second, 20*time.Millisecond, "a gets its share back")
	stop()
	f.assertAllHandled(t, f.a, a2)
	a2.send(t, "quit")
	a2.waitExit(t, 20*time.Second)
}

// TestStaticMemberPausedProcessIsFenced: static member a (a child process, the only member)
// holds a message unacked on partitions 0 and 1 and is frozen with SIGSTOP; a new process
// with its name takes the name over once a was silent for the presence window, takes its
// leases and delivers the two messages again, holding them. a, resumed before its lease
// terms ran out (on a slow network, so it acts before Redis answers it), acks its two at
// once: the acks are not applied (the entries stay pending for the new process), and a
// delivers nothing more, though entries wait in its queue behind the held ones (its presence
// ran out), learns that its name was taken and stops. The new process then delivers
// everything in order.
func TestStaticMemberPausedProcessIsFenced(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := srv.Client(t)
	proxy, err := chaos.Listen(srv.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })
	const topic = "static-stop"
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: staticPartitions})
	a := startStaticChild(t, []string{proxy.Addr()}, topic, "a", true)
	require.Eventually(t, func() bool {
		return streamqtest.CountByMember(streamqtest.LeaseOwners(t, client, topic, staticGroup, staticPartitions))["a"] == staticPartitions
	}, 30*time.Second, 20*time.Millisecond)
	parts := []int{0, 1}
	require.NoError(t, pub.Publish(topic, holdMessages(parts)...))
	behind := streamqtest.KeyedMessages(0, 20, 1)
	for i, m := range behind {
		m.Metadata.Set(streamq.ForcePartitionMetadata, map[bool]string{true: "0", false: "1"}[i%2 == 0])
	}
	require.NoError(t, pub.Publish(topic, behind...))
	require.Eventually(t, func() bool { return countEvents(t, a, "holding") == 2 }, 10*time.Second, 10*time.Millisecond)

	a.signal(t, syscall.SIGSTOP)
	a.waitStopped(t)
	stopped := time.Now()
	stoppedAt := len(a.events(t))
	// A presence refresh a wrote just before it stopped may still be on its way through the
	// proxy (a loaded machine): the new process starts once the record stands still, or it
	// would rightly see a renewing a and refuse the name.
	waitPresenceStill(t, client, topic, "a", 250*time.Millisecond)
	a2 := startStaticChild(t, []string{srv.Addr()}, topic, "a", true)
	require.Eventually(t, func() bool { return countEvents(t, a2, "holding") == 2 }, 20*time.Second, 10*time.Millisecond)
	for _, e := range a2.events(t) {
		if e.Ev == "holding" {
			assert.GreaterOrEqual(t, e.Count, int64(2), "delivered again")
		}
	}

	// Frozen for less than LeaseTTL: its leases' terms have not run out, its presence has (it
	// missed its presence refreshes for the window), and that alone keeps it from
	// delivering the entries queued behind the held ones.
	var cfg streamq.SubscriberConfig
	staticTimes(&cfg)
	require.Less(t, time.Since(stopped), cfg.Membership.LeaseTTL, "the takeover took longer than LeaseTTL: this run proves nothing about presence")
	proxy.SetLatency(300 * time.Millisecond)
	a.signal(t, syscall.SIGCONT)
	a.send(t, "ack")
	a.waitEvent(t, "acked", 10*time.Second)
	require.Eventually(t, func() bool {
		for _, e := range a.events(t) {
			if e.Ev == "log" && containsAll(e.Msg, "took over this ConsumerName") {
				return true
			}
		}
		return false
	}, 20*time.Second, 20*time.Millisecond, "the resumed process learns it was superseded")
	a.send(t, "quit")
	a.waitExit(t, 20*time.Second)
	for _, e := range a.events(t)[stoppedAt:] {
		assert.NotEqual(t, "deliver", e.Ev, "the superseded process delivered seq %s", e.Seq)
	}
	space := keys.New("", "")
	for _, p := range parts {
		str := space.PartitionStream(topic, p)
		assert.Zero(t, streamqtest.GroupAcked(t, client, str, staticGroup),
			"partition %d: nothing acked: the stale process's ack was not applied", p)
	}

	a2.send(t, "ack")
	require.Eventually(t, func() bool {
		return streamqtest.GroupPending(t, client, space.PartitionStream(topic, 0), staticGroup) == 0 &&
			streamqtest.GroupPending(t, client, space.PartitionStream(topic, 1), staticGroup) == 0 &&
			len(childDeliveries(t, a2)) >= 22
	}, 20*time.Second, 20*time.Millisecond)
	last := map[int]int{0: -2, 1: -2}
	for _, e := range childDeliveries(t, a2) {
		seq := atoi(t, e.Seq)
		assert.Greater(t, seq, last[e.Partition], "partition %d in order", e.Partition)
		last[e.Partition] = seq
	}
	a2.send(t, "quit")
	a2.waitExit(t, 20*time.Second)
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

// assertDeliveredAgainAndQuit checks that the restarted process a2 delivered again every
// message of held (pending for its name when its predecessor was killed), then ends it.
func assertDeliveredAgainAndQuit(t *testing.T, a2 *childProc, held []string) {
	t.Helper()
	again := map[string]int64{}
	for _, e := range childDeliveries(t, a2) {
		again[e.UUID] = e.Count
	}
	for _, u := range held {
		assert.GreaterOrEqual(t, again[u], int64(2), "the new process delivers the pending message %s again", u)
	}
	a2.send(t, "quit")
	a2.waitExit(t, 20*time.Second)
}

// waitPresenceStill waits until member's record in the group's instances hash has not
// changed for still.
func waitPresenceStill(t *testing.T, client redis.UniversalClient, topic, member string, still time.Duration) {
	t.Helper()
	key := keys.New("", "").MemberInstances(topic, staticGroup)
	last, since := "", time.Now()
	require.Eventually(t, func() bool {
		rec := client.HGet(context.Background(), key, member).Val()
		if rec != last {
			last, since = rec, time.Now()
		}
		return time.Since(since) >= still
	}, 10*time.Second, 10*time.Millisecond, "the presence record of %s stands still", member)
}
