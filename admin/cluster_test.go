package admin_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// adminReport is what the admin API says about the traffic of adminTraffic, without what
// differs from run to run by nature: stream ids, times, generated names.
type adminReport struct {
	Topics       []string
	Info         queueReport
	Groups       []admin.GroupInfo
	Stats        map[string]statsReport
	Pending      []pendingReport
	DLQTopics    []string
	DLQSize      int64
	DeadLetters  []deadReport
	Replayed     int
	AfterReplay  queueReport
	Deleted      []string // key names, stream ids replaced by "ID"
	TopicsAfter  []string
	KeysLeftOver []string
}

type queueReport struct {
	Partitions, Groups      int
	Length, Retries         int64
	DLQLength               int64
	PerPartitionLength      []int64
	PerPartitionDLQLength   []int64
	PerPartitionGroups      []int
	FirstAndLastIDsReported bool
}

type statsReport struct {
	Members    []string
	Pending    int64
	Lag        int64
	Partitions []partitionStatsReport
}

type partitionStatsReport struct {
	Partition            int
	Pending, Lag         int64
	LagExact             bool
	EntriesRead          int64
	Consumers            int
	LeaseOwner           string
	HasCommitFrontier    bool
	HasLastDeliveredID   bool
	TimeLagWithinAMinute bool
}

type pendingReport struct {
	Partition  int
	Consumer   string
	Deliveries int64
}

type deadReport struct {
	Partition              int
	Payload, Reason, Group string
	RetryCount, MaxRetries int
	Custom                 string
}

const (
	cmpTopic      = "orders"
	cmpPartitions = 8
	cmpMessages   = 40
)

// cmpMessage i goes to partition i % 8; every 10th from 3 is dead-lettered at once ("bad-i"),
// every 10th from 7 is nacked until its two retries are exhausted, the rest are acked.
func cmpMessage(i int) *message.Message {
	mode, reason := "ok", ""
	switch i % 10 {
	case 3:
		mode, reason = "dead", "bad-"+strconv.Itoa(i)
	case 7:
		mode = "retry"
	}
	return msg("m"+strconv.Itoa(i), mode, reason, i%cmpPartitions)
}

// runWorkers consumes the topic as group "workers" (member "w") until every message was
// handled, dead letters included, then leaves.
func runWorkers(t *testing.T, client redis.UniversalClient, adm *admin.Admin) {
	t.Helper()
	cfg := fastSub(client, workers, cmpPartitions)
	cfg.Membership.ConsumerName = "w"
	sub, err := streamq.NewSubscriber(cfg, watermill.NopLogger{})
	require.NoError(t, err)
	ch, err := sub.Subscribe(context.Background(), cmpTopic)
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for m := range ch {
			switch m.Metadata.Get(modeKey) {
			case "dead":
				_ = streamq.DeadLetter(m, errors.New(m.Metadata.Get(reasonKey)))
				m.Nack()
			case "retry":
				m.Nack()
			default:
				m.Ack()
			}
		}
	}()
	require.Eventually(t, func() bool {
		gs, err := adm.GroupStats(context.Background(), cmpTopic, workers)
		n, err2 := adm.DLQSize(context.Background(), cmpTopic)
		return err == nil && err2 == nil && n == 8 && gs.Lag == 0 && gs.Pending == 0
	}, 30*time.Second, 20*time.Millisecond, "group %q never handled every message", workers)
	require.NoError(t, sub.Close())
	wg.Wait()
}

// adminTraffic runs the same traffic on client and returns what the admin API reports:
// group "workers" handles every message (8 dead letters), group "lagging" exists and reads
// nothing, group "pending" reads 2 entries per partition and acks none; then one dead letter
// is replayed, then every "bad-*" one (deleting them), then the topic is deleted.
func adminTraffic(t *testing.T, client redis.UniversalClient) adminReport {
	t.Helper()
	ctx := context.Background()
	space := keys.New("", "")
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	require.NoError(t, adm.CreateTopic(ctx, cmpTopic, cmpPartitions))
	for _, g := range []string{"lagging", "pending"} {
		sub, err := streamq.NewSubscriber(fastSub(client, g, cmpPartitions), watermill.NopLogger{})
		require.NoError(t, err)
		require.NoError(t, sub.SubscribeInitialize(cmpTopic))
		require.NoError(t, sub.Close())
	}
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client}, watermill.NopLogger{})
	require.NoError(t, err)
	defer func() { _ = pub.Close() }()
	var msgs []*message.Message
	for i := 0; i < cmpMessages; i++ {
		msgs = append(msgs, cmpMessage(i))
	}
	require.NoError(t, pub.Publish(cmpTopic, msgs...))
	runWorkers(t, client, adm)
	for p := 0; p < cmpPartitions; p++ {
		_, err := client.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "pending", Consumer: "c",
			Streams: []string{space.PartitionStream(cmpTopic, p), ">"}, Count: 2, Block: -1}).Result()
		require.NoError(t, err)
	}

	var r adminReport
	r.Topics, err = adm.ListTopics(ctx)
	require.NoError(t, err)
	r.Info = queueOf(t, adm)
	r.Groups, err = adm.ConsumerGroups(ctx, cmpTopic)
	for i := range r.Groups { // ages and when a member was last seen depend on when each run ran
		assert.Equal(t, r.Groups[i].Name == workers, !r.Groups[i].LastSeen.IsZero(), "LastSeen of %s", r.Groups[i].Name)
		r.Groups[i].TimeLag, r.Groups[i].PendingAge, r.Groups[i].LastSeen = 0, 0, time.Time{}
	}
	require.NoError(t, err)
	r.Stats = map[string]statsReport{}
	for _, g := range []string{workers, "lagging", "pending"} {
		r.Stats[g] = statsOf(t, adm, g)
	}
	r.Pending = pendingOf(t, adm, "pending")
	r.DLQTopics, err = adm.DLQTopics(ctx)
	require.NoError(t, err)
	r.DLQSize, err = adm.DLQSize(ctx, cmpTopic)
	require.NoError(t, err)
	dead, err := adm.DLQEntries(ctx, cmpTopic, 0)
	require.NoError(t, err)
	r.DeadLetters = deadOf(dead)

	r.Replayed = replay(t, adm, dead)
	r.AfterReplay = queueOf(t, adm)
	deleted, err := adm.DeleteTopic(ctx, cmpTopic)
	require.NoError(t, err)
	r.Deleted = normalizedKeys(deleted.Keys)
	r.TopicsAfter, err = adm.ListTopics(ctx)
	require.NoError(t, err)
	r.KeysLeftOver = keysEverywhere(t, client, "*"+cmpTopic+"*")
	return r
}

// replay replays m3's dead letter (kept), then every "bad-*" one (deleted), and returns how
// many ReplayAll replayed.
func replay(t *testing.T, adm *admin.Admin, dead []admin.DeadLetter) int {
	t.Helper()
	ctx := context.Background()
	for _, d := range dead {
		if string(d.Payload) == "m3" {
			_, err := adm.ReplayDeadLetter(ctx, cmpTopic, d.Partition, d.ID, admin.ReplayOptions{})
			require.NoError(t, err)
		}
	}
	n, err := adm.ReplayAll(ctx, cmpTopic, 0, func(d admin.DeadLetter) bool {
		return strings.HasPrefix(d.Reason, "bad-")
	}, admin.ReplayOptions{Delete: true, Again: true})
	require.NoError(t, err)
	return n
}

func queueOf(t *testing.T, adm *admin.Admin) queueReport {
	t.Helper()
	q, err := adm.QueueInfo(context.Background(), cmpTopic)
	require.NoError(t, err)
	r := queueReport{Partitions: q.Partitions, Groups: q.Groups, Length: q.Length, Retries: q.Retries, DLQLength: q.DLQLength,
		FirstAndLastIDsReported: q.FirstID != "" && q.LastID != ""}
	for _, p := range q.PerPartition {
		r.PerPartitionLength = append(r.PerPartitionLength, p.Length)
		r.PerPartitionDLQLength = append(r.PerPartitionDLQLength, p.DLQLength)
		r.PerPartitionGroups = append(r.PerPartitionGroups, p.Groups)
	}
	return r
}

func statsOf(t *testing.T, adm *admin.Admin, group string) statsReport {
	t.Helper()
	gs, err := adm.GroupStats(context.Background(), cmpTopic, group)
	require.NoError(t, err)
	r := statsReport{Members: gs.Members, Pending: gs.Pending, Lag: gs.Lag}
	for _, p := range gs.Partitions {
		r.Partitions = append(r.Partitions, partitionStatsReport{
			Partition: p.Partition, Pending: p.Pending, Lag: p.Lag, LagExact: p.LagExact,
			EntriesRead: p.EntriesRead, Consumers: p.Consumers, LeaseOwner: p.LeaseOwner,
			HasCommitFrontier: p.CommitFrontier != "", HasLastDeliveredID: p.LastDeliveredID != "0-0",
			TimeLagWithinAMinute: p.TimeLag < time.Minute,
		})
	}
	return r
}

func pendingOf(t *testing.T, adm *admin.Admin, group string) []pendingReport {
	t.Helper()
	entries, err := adm.Pending(context.Background(), cmpTopic, group, admin.PendingOptions{Sort: admin.SortByID, Limit: 1000})
	require.NoError(t, err)
	var out []pendingReport
	for _, e := range entries {
		out = append(out, pendingReport{Partition: e.Partition, Consumer: e.Consumer, Deliveries: e.Deliveries})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out
}

func deadOf(dead []admin.DeadLetter) []deadReport {
	var out []deadReport
	for _, d := range dead {
		out = append(out, deadReport{Partition: d.Partition, Payload: string(d.Payload), Reason: d.Reason,
			Group: d.Group, RetryCount: d.RetryCount, MaxRetries: d.MaxRetries, Custom: d.Metadata["custom"]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Payload < out[j].Payload })
	return out
}

var (
	streamIDInKey = regexp.MustCompile(`\d+-\d+`)
	producerInKey = regexp.MustCompile(`:producer:\{([^}]*):p:\d+\}:.*$`)
)

// normalizedKeys are ks with stream ids and producer records replaced, sorted, each once: one
// producer record per topic however many flushers wrote (their ids are random) and however
// many partitions share a record (64 on a single node, one on a Cluster).
func normalizedKeys(ks []string) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = streamIDInKey.ReplaceAllString(producerInKey.ReplaceAllString(k, ":producer:{${1}}:PRODUCER"), "ID")
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// keysEverywhere lists the keys matching pattern on every master (or the single node).
func keysEverywhere(t *testing.T, client redis.UniversalClient, pattern string) []string {
	t.Helper()
	var (
		mu  sync.Mutex
		out []string
	)
	scan := func(ctx context.Context, node *redis.Client) error {
		iter := node.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			out = append(out, iter.Val())
			mu.Unlock()
		}
		return iter.Err()
	}
	ctx := context.Background()
	switch c := client.(type) {
	case *redis.ClusterClient:
		require.NoError(t, c.ForEachMaster(ctx, scan))
	case *redis.Client:
		require.NoError(t, scan(ctx, c))
	default:
		t.Fatalf("unsupported client %T", client)
	}
	sort.Strings(out)
	return out
}

// TestAdminSameResultsOnSingleNodeAndCluster runs the same traffic on a single redis-server
// and on a 3-master cluster (where the topic's 8 partitions spread over the masters) and
// compares what topics, queue info, consumer groups, group stats and lag, pending entries,
// DLQ topics, sizes and entries, replays and DeleteTopic report: they must be the same.
func TestAdminSameResultsOnSingleNodeAndCluster(t *testing.T) {
	redistest.SkipShort(t, "a comparison with a Redis Cluster")
	t.Parallel()
	reports := map[string]adminReport{}
	for name, start := range map[string]func(t *testing.T) redis.UniversalClient{
		"single":  func(t *testing.T) redis.UniversalClient { return redistest.Start(t).Client(t) },
		"cluster": func(t *testing.T) redis.UniversalClient { return redistest.StartCluster(t, 3, 0).Client(t) },
	} {
		t.Run(name, func(t *testing.T) { reports[name] = adminTraffic(t, start(t)) })
	}
	single, cluster := reports["single"], reports["cluster"]
	require.NotEmpty(t, single.Deleted, "the single-node run did not finish")
	require.NotEmpty(t, cluster.Deleted, "the cluster run did not finish")
	assert.Equal(t, single, cluster)
	// A few absolute checks, so that equality is not equality of two wrong answers.
	assert.Equal(t, int64(8), single.DLQSize)
	assert.Equal(t, int64(cmpMessages), single.Info.Length, "40 messages (and 2 retry entries for each of 4, not counted)")
	assert.Equal(t, int64(4*2), single.Info.Retries)
	assert.Equal(t, int64(cmpMessages), single.Stats["lagging"].Lag, "the retries of workers are not lagging's to deliver")
	assert.Equal(t, int64(2*cmpPartitions), single.Stats["pending"].Pending)
	assert.Len(t, single.Pending, 2*cmpPartitions)
	assert.Equal(t, 4, single.Replayed)
	assert.Empty(t, single.TopicsAfter)
	assert.Empty(t, single.KeysLeftOver)
	t.Logf("DeleteTopic removed %d keys: %s", len(single.Deleted), fmt.Sprint(single.Deleted))
}
