package scenario_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// replicationWindow is how long before a master's death a write it acknowledged may still be
// missing on the replica that takes over: Redis replicates asynchronously. The failover test
// tolerates, and reports one by one, losses of writes acknowledged by the killed master in
// this window; any other loss fails it.
const replicationWindow = time.Second

// offloadedSize pads the messages of every third round over the partitions above the
// failover test's Payloads.Threshold, so the offload script (payload key and entry written in
// one script, run by SHA in the publish pipeline) is failed over too.
const offloadedSize = 64

func offloaded(i, partitions int) bool { return (i/partitions)%3 == 0 }

// publishRecord is one Publish call of the failover test.
type publishRecord struct {
	uuid       string
	partition  int
	start, end time.Time
	err        error
}

// kill is when the victim master was killed, and which partitions it served.
type kill struct {
	start, end time.Time // before SIGKILL; once the process was gone
	master     string
	partitions map[int]bool
}

// inWindow reports whether p was acknowledged by the killed master within replicationWindow
// before its death.
func (k kill) inWindow(p publishRecord) bool {
	return k.partitions[p.partition] && !p.end.Before(k.start.Add(-replicationWindow)) && !p.end.After(k.end)
}

// lossReport sorts the messages whose Publish returned nil by what became of them.
type lossReport struct {
	acked, failed    int
	duplicates       int      // handled more than once
	handledNotStored int      // handled before the kill, then lost with the killed master
	lostInWindow     []string // never handled, gone from Redis, acked in the replication window
	lostElsewhere    []string // never handled, gone from Redis, anything else: a bug
	notHandled       []string // still in Redis but never handled: a bug
}

// classify builds the loss report of a failover run.
func classify(published []publishRecord, handled map[string]int, stored map[string]bool, k kill) lossReport {
	var r lossReport
	for _, p := range published {
		if p.err != nil {
			r.failed++
			continue
		}
		r.acked++
		n := handled[p.uuid]
		if n > 1 {
			r.duplicates++
		}
		switch {
		case n > 0 && !stored[p.uuid]:
			r.handledNotStored++
		case n > 0:
		case stored[p.uuid]:
			r.notHandled = append(r.notHandled, p.uuid)
		case k.inWindow(p):
			r.lostInWindow = append(r.lostInWindow, fmt.Sprintf("%s (partition %d, acked %s before the kill)",
				p.uuid, p.partition, k.start.Sub(p.end).Round(time.Millisecond)))
		default:
			r.lostElsewhere = append(r.lostElsewhere, fmt.Sprintf("%s (partition %d, acked %s after the kill began)",
				p.uuid, p.partition, p.end.Sub(k.start).Round(time.Millisecond)))
		}
	}
	return r
}

func TestFailoverLossClassification(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	k := kill{start: t0, end: t0.Add(10 * time.Millisecond), partitions: map[int]bool{1: true}}
	rec := func(uuid string, p int, endOffset time.Duration, err error) publishRecord {
		return publishRecord{uuid: uuid, partition: p, start: t0.Add(endOffset - time.Millisecond), end: t0.Add(endOffset), err: err}
	}
	published := []publishRecord{
		rec("handled", 0, -5*time.Second, nil),
		rec("twice", 0, -4*time.Second, nil),
		rec("gone-but-handled", 1, -200*time.Millisecond, nil),
		rec("window", 1, -500*time.Millisecond, nil),
		rec("too-old", 1, -2*time.Second, nil),
		rec("other-master", 0, -100*time.Millisecond, nil),
		rec("stored-unhandled", 2, 3*time.Second, nil),
		rec("failed", 1, -100*time.Millisecond, fmt.Errorf("refused")),
	}
	handled := map[string]int{"handled": 1, "twice": 2, "gone-but-handled": 1}
	stored := map[string]bool{"handled": true, "twice": true, "stored-unhandled": true}
	r := classify(published, handled, stored, k)
	assert.Equal(t, 7, r.acked)
	assert.Equal(t, 1, r.failed)
	assert.Equal(t, 1, r.duplicates)
	assert.Equal(t, 1, r.handledNotStored)
	require.Len(t, r.lostInWindow, 1)
	assert.Contains(t, r.lostInWindow[0], "window")
	require.Len(t, r.lostElsewhere, 2)
	assert.Contains(t, r.lostElsewhere[0], "too-old")
	assert.Contains(t, r.lostElsewhere[1], "other-master")
	assert.Equal(t, []string{"stored-unhandled"}, r.notHandled)
}

// failoverRun is the traffic of the failover test: publishers, a consumer group, and what
// each saw.
type failoverRun struct {
	topic      string
	partitions int
	pub        *streamq.Publisher
	stop       chan struct{}
	wg         sync.WaitGroup
	stopOnce   sync.Once

	mu        sync.Mutex
	published []publishRecord
	handled   map[string]int       // uuid -> deliveries acked
	firstSeen map[string]time.Time // uuid -> first delivery
}

func newFailoverRun(topic string, partitions int, pub *streamq.Publisher) *failoverRun {
	return &failoverRun{topic: topic, partitions: partitions, pub: pub, stop: make(chan struct{}),
		handled: map[string]int{}, firstSeen: map[string]time.Time{}}
}

// consume acks every message of ch, recording it.
func (r *failoverRun) consumeInto(ch <-chan *message.Message) {
	go func() {
		for m := range ch {
			r.mu.Lock()
			r.handled[m.UUID]++
			if _, ok := r.firstSeen[m.UUID]; !ok {
				r.firstSeen[m.UUID] = time.Now()
			}
			r.mu.Unlock()
			m.Ack()
		}
	}()
}

// startPublishers runs n publishers until stopPublishers.
func (r *failoverRun) startPublishers(n int) {
	var next atomic.Int64
	for i := 0; i < n; i++ {
		r.wg.Add(1)
		go r.publishLoop(&next)
	}
}

func (r *failoverRun) stopPublishers() {
	r.stopOnce.Do(func() {
		close(r.stop)
		r.wg.Wait()
	})
}

// publishLoop publishes one message at a time, round robin over the partitions, never
// retrying a failed publish (its message may or may not be stored).
func (r *failoverRun) publishLoop(next *atomic.Int64) {
	defer r.wg.Done()
	for {
		rec := r.publishOne(int(next.Add(1)))
		r.mu.Lock()
		r.published = append(r.published, rec)
		r.mu.Unlock()
		pause := 2 * time.Millisecond
		if rec.err != nil {
			pause = 50 * time.Millisecond
		}
		select {
		case <-r.stop:
			return
		case <-time.After(pause):
		}
	}
}

func (r *failoverRun) publishOne(i int) publishRecord {
	p := i % r.partitions
	payload := "m" + strconv.Itoa(i)
	if offloaded(i, r.partitions) { // above the test's Payloads.Threshold: through offload.lua
		payload += strings.Repeat(".", offloadedSize)
	}
	m := message.NewMessage(watermill.NewUUID(), []byte(payload))
	m.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(p))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m.SetContext(ctx)
	rec := publishRecord{uuid: m.UUID, partition: p, start: time.Now()}
	rec.err = r.pub.Publish(r.topic, m)
	rec.end = time.Now()
	return rec
}

// recoveredAfter returns when the first message published after t to one of parts returned,
// and when the first such message was delivered (zero while there is none).
func (r *failoverRun) recoveredAfter(t time.Time, parts map[int]bool) (published, delivered time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.published {
		if p.err != nil || !parts[p.partition] || p.start.Before(t) {
			continue
		}
		if published.IsZero() || p.end.Before(published) {
			published = p.end
		}
		if seen, ok := r.firstSeen[p.uuid]; ok && (delivered.IsZero() || seen.Before(delivered)) {
			delivered = seen
		}
	}
	return published, delivered
}

// failures counts the publishes started after a time that failed.
type failures struct {
	killed      int   // to a partition of the killed master
	clusterDown int   // to another master, refused with CLUSTERDOWN
	other       int   // to another master, for any other reason
	firstOther  error // the first of those
}

// failedAfter counts the publishes started after t that failed. Redis refuses every write
// with CLUSTERDOWN from when the nodes mark the master failed until its replica is promoted
// (cluster-require-full-coverage yes, the default): those are counted apart.
func (r *failoverRun) failedAfter(t time.Time, parts map[int]bool) failures {
	r.mu.Lock()
	defer r.mu.Unlock()
	var f failures
	for _, p := range r.published {
		switch {
		case p.err == nil || p.start.Before(t):
		case parts[p.partition]:
			f.killed++
		case redis.HasErrorPrefix(p.err, "CLUSTERDOWN"):
			f.clusterDown++
		default:
			f.other++
			if f.firstOther == nil {
				f.firstOther = p.err
			}
		}
	}
	return f
}

// waitHandled waits until every acknowledged message still stored in Redis was handled.
func (r *failoverRun) waitHandled(t *testing.T, stored map[string]bool, timeout time.Duration) {
	t.Helper()
	assert.Eventually(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, p := range r.published {
			if p.err == nil && stored[p.uuid] && r.handled[p.uuid] == 0 {
				return false
			}
		}
		return true
	}, timeout, 100*time.Millisecond, "messages stored in Redis were never handled")
}

func (r *failoverRun) report(stored map[string]bool, k kill) lossReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return classify(r.published, r.handled, stored, k)
}

// storedUUIDs reads every partition stream and returns the UUIDs it holds.
func storedUUIDs(t *testing.T, client redis.UniversalClient, topic string, partitions int) map[string]bool {
	t.Helper()
	space := keys.New("", "")
	out := map[string]bool{}
	for p := 0; p < partitions; p++ {
		msgs, err := client.XRange(context.Background(), space.PartitionStream(topic, p), "-", "+").Result()
		require.NoError(t, err)
		for _, m := range msgs {
			if u, ok := m.Values[streamq.UUIDField].(string); ok {
				out[u] = true
			}
		}
	}
	return out
}

// failoverClient is the client of every publisher and member in the failover test, with
// go-redis's defaults: the library itself refreshes the slot map on connection errors, so the
// promoted replica is found without a short ClusterStateReloadInterval.
func failoverClient(t *testing.T, c *redistest.Cluster) *redis.ClusterClient {
	return c.Client(t)
}

// TestClusterFailover kills (SIGKILL) the master that serves the topic's metadata, its group
// membership and a third of its partitions while 4 publishers and a two-member consumer group
// run, lets its replica take over, and checks that both sides recover without a restart, that
// publishing to partitions on the other masters never fails, and that every message whose
// Publish returned nil is handled at least once. The only loss it tolerates, and reports
// message by message, is the asynchronous-replication window (see replicationWindow).
// Duplicates and recovery times are reported with t.Logf.
func TestClusterFailover(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3, 1)
	client := c.Client(t)
	space := keys.New("", "")
	const topic, group, partitions = "failover", "g", 12
	k := kill{partitions: map[int]bool{}}
	var err error
	k.master, err = c.MasterOf(streamqtest.SlotOf(t, client, space.Meta(topic)))
	require.NoError(t, err)
	for p, m := range streamqtest.PartitionMasters(t, c, client, topic, partitions) {
		if m == k.master {
			k.partitions[p] = true
		}
	}
	require.NotEmpty(t, k.partitions, "the master to kill serves no partition of the topic")
	t.Logf("will kill %s: topic metadata, membership and partitions %v", k.master, streamqtest.SortedInts(k.partitions))

	run := newFailoverRun(topic, partitions, streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: failoverClient(t, c),
		DefaultPartitionCount: partitions, Trim: streamq.TrimConfig{MaxLen: -1}, Partitioning: streamq.PartitioningConfig{RefreshInterval: 500 * time.Millisecond},
		Payloads: streamq.PayloadConfig{Threshold: offloadedSize / 2}}))
	members := map[string]*streamq.Subscriber{}
	for _, name := range []string{"a", "b"} {
		sub, ch := streamqtest.SubscribeMember(t, failoverClient(t, c), topic, group, name, partitions, func(cfg *streamq.SubscriberConfig) {
			cfg.Membership.LeaseTTL = 3 * time.Second
			cfg.Membership.RenewInterval = 500 * time.Millisecond
		})
		members[name] = sub
		run.consumeInto(ch)
	}
	streamqtest.WaitOwners(t, client, topic, group, partitions, streamqtest.Balanced(map[string]int{"a": partitions / 2, "b": partitions / 2}))
	run.startPublishers(4)
	defer run.stopPublishers()
	time.Sleep(2 * time.Second)

	// The offloaded appends are sent as EVAL with the script's text (internal/script), so a
	// promoted replica with an empty script cache runs them at once: nothing to preload.

	k.start = time.Now()
	require.NoError(t, c.KillMaster(k.master))
	k.end = time.Now()
	require.NoError(t, c.WaitOK(30*time.Second), "no replica took over")
	t.Logf("replica promoted: cluster ok %s after the kill", time.Since(k.start).Round(time.Millisecond))

	var pubAt, deliveredAt time.Time
	require.Eventually(t, func() bool {
		pubAt, deliveredAt = run.recoveredAfter(k.end, k.partitions)
		return !pubAt.IsZero() && !deliveredAt.IsZero()
	}, 60*time.Second, 50*time.Millisecond, "no publish to, or delivery from, the failed-over partitions within 60s")
	t.Logf("failed-over partitions: first publish returned %s after the kill, first delivery %s after the kill",
		pubAt.Sub(k.start).Round(time.Millisecond), deliveredAt.Sub(k.start).Round(time.Millisecond))
	time.Sleep(time.Second) // traffic on the recovered cluster
	run.stopPublishers()

	f := run.failedAfter(k.start, k.partitions)
	t.Logf("publishes started after the kill that failed: %d to the killed master's partitions; to the other masters' "+
		"partitions %d with CLUSTERDOWN (Redis refuses writes until the promotion) and %d for other reasons",
		f.killed, f.clusterDown, f.other)
	assert.Zero(t, f.other, "publishing to partitions on healthy masters failed during the failover; first error: %v", f.firstOther)

	inspect := c.Client(t) // a client created after the failover routes to the new master
	stored := storedUUIDs(t, inspect, topic, partitions)
	run.waitHandled(t, stored, 60*time.Second)
	r := run.report(stored, k)
	t.Logf("%d publishes returned nil, %d returned an error; %d acknowledged messages handled more than once (duplicates)",
		r.acked, r.failed, r.duplicates)
	if r.handledNotStored > 0 {
		t.Logf("%d messages were handled before the kill but are gone from Redis (not replicated)", r.handledNotStored)
	}
	if len(r.lostInWindow) > 0 {
		t.Logf("LOST IN THE REPLICATION WINDOW: %d acknowledged messages the killed master took within %s of its death "+
			"never reached its replica: %s", len(r.lostInWindow), replicationWindow, streamqtest.Describe(r.lostInWindow, 10))
	}
	assert.Empty(t, r.lostElsewhere, "acknowledged messages lost outside the replication window: %s", streamqtest.Describe(r.lostElsewhere, 10))
	assert.Empty(t, r.notHandled, "acknowledged messages stored in Redis but never handled: %s", streamqtest.Describe(r.notHandled, 10))

	owners := streamqtest.CountByMember(streamqtest.LeaseOwners(t, inspect, topic, group, partitions))
	assert.Zero(t, owners[""], "partitions without an owner after the failover: %v", owners)
	for p := 0; p < partitions; p++ {
		assert.Eventually(t, func() bool { return streamqtest.GroupPending(t, inspect, space.PartitionStream(topic, p), group) == 0 },
			10*time.Second, 50*time.Millisecond, "partition %d keeps pending entries", p)
	}
	for name, sub := range members {
		stats := sub.Stats()
		t.Logf("member %s: %+v", name, stats)
		assert.Zero(t, stats.PayloadMissing, "member %s found offloaded payloads missing", name)
		assert.Zero(t, stats.DeadLettered, "member %s dead-lettered messages", name)
	}
}

func (r *failoverRun) sentinelFailuresAfter(t time.Time) sentinelPublishFailures {
	r.mu.Lock()
	defer r.mu.Unlock()
	var f sentinelPublishFailures
	for _, p := range r.published {
		if p.err == nil || p.start.Before(t) {
			continue
		}
		f.all++
		if redis.HasErrorPrefix(p.err, "READONLY") {
			f.readOnly++
		}
		if f.first == nil {
			f.first = p.err
		}
	}
	return f
}

// lostAfter lists the messages whose Publish started after t and returned nil that are not
// stored in Redis or were never handled.
func (r *failoverRun) lostAfter(t time.Time, stored map[string]bool) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var lost []string
	for _, p := range r.published {
		if p.err == nil && !p.start.Before(t) && (!stored[p.uuid] || r.handled[p.uuid] == 0) {
			lost = append(lost, p.uuid)
		}
	}
	return lost
}

// longestPublishAfter returns the longest Publish call started after t.
func (r *failoverRun) longestPublishAfter(t time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var longest time.Duration
	for _, p := range r.published {
		if d := p.end.Sub(p.start); !p.start.Before(t) && d > longest {
			longest = d
		}
	}
	return longest
}
