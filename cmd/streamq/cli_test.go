package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// binary is the streamq command built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "streamq-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "streamq")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "build streamq: %v\n", err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// cliEnv is a redis-server of its own with an Admin, a Publisher and a way to run the binary
// against it.
type cliEnv struct {
	t      *testing.T
	ctx    context.Context
	url    string
	client *redis.Client
	adm    *admin.Admin
	pub    *streamq.Publisher
}

func newCLIEnv(t *testing.T) *cliEnv {
	t.Helper()
	srv := redistest.Start(t)
	client := srv.Client(t)
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client}, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	return &cliEnv{t: t, ctx: context.Background(), url: srv.URL(), client: client, adm: adm, pub: pub}
}

// with returns a copy of e reporting to t (a subtest).
func (e *cliEnv) with(t *testing.T) *cliEnv {
	c := *e
	c.t = t
	return &c
}

// result is one run of the binary.
type result struct {
	stdout, stderr string
	code           int
}

// command builds an exec.Cmd of the binary against the env's Redis, without $REDIS_URL and
// with stdin not a terminal (exec's default /dev/null).
func (e *cliEnv) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, binary, append([]string{"--redis-url", e.url}, args...)...)
	cmd.Env = envWithout("REDIS_URL")
	return cmd
}

// run runs the binary with args and returns its output and exit code.
func (e *cliEnv) run(args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
	defer cancel()
	return runCmd(e.t, e.command(ctx, args...))
}

func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err, "run %v", cmd.Args)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

func envWithout(name string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// ok runs the binary, requires exit code 0 and returns stdout.
func (e *cliEnv) ok(args ...string) string {
	e.t.Helper()
	r := e.run(args...)
	require.Equal(e.t, 0, r.code, "streamq %v\nstdout:\n%s\nstderr:\n%s", args, r.stdout, r.stderr)
	return r.stdout
}

// jsonOf runs the binary with --json and decodes stdout into v (also returning it raw).
func (e *cliEnv) jsonOf(v any, args ...string) []byte {
	e.t.Helper()
	out := e.ok(append(args, "--json")...)
	require.NoError(e.t, json.Unmarshal([]byte(out), v), "output of %v:\n%s", args, out)
	return []byte(out)
}

// requireKeys checks that the JSON object raw has the given keys (the wire names).
func requireKeys(t *testing.T, raw []byte, keys ...string) {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	for _, k := range keys {
		assert.Contains(t, m, k, "JSON key %q in %s", k, raw)
	}
}

// firstObject returns the first element of the JSON array raw.
func firstObject(t *testing.T, raw []byte) []byte {
	t.Helper()
	var arr []json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &arr))
	require.NotEmpty(t, arr)
	return arr[0]
}

const (
	ordersTopic = "orders"
	ordersParts = 4
	payments    = "payments"
	failing     = "failing"
	workers     = "workers"
)

func fastSubscriber(t *testing.T, client redis.UniversalClient, group string, partitions int) *streamq.Subscriber {
	t.Helper()
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
		Client: client, ConsumerGroup: group, DefaultPartitionCount: partitions,
		Membership: streamq.MembershipConfig{LeaseTTL: 2 * time.Second, RenewInterval: 300 * time.Millisecond, RebalanceInterval: 150 * time.Millisecond},
		Read:       streamq.ReadConfig{BlockTime: 50 * time.Millisecond, BatchCount: 1}, Delivery: streamq.DeliveryConfig{CloseTimeout: 2 * time.Second},
		Retry: streamq.RetryConfig{Policy: streamq.ExponentialBackoff{Attempts: 1}, MoverInterval: 100 * time.Millisecond},
	}, watermill.NopLogger{})
	require.NoError(t, err)
	return sub
}

// forced is a message forced to partition p.
func forced(payload []byte, p int) *message.Message {
	m := message.NewMessage(watermill.NewUUID(), payload)
	m.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(p))
	label := string(payload)
	if !utf8.Valid(payload) {
		label = "binary"
	}
	m.Metadata.Set("n", label)
	return m
}

// seed creates "orders" (4 partitions, 30 messages round robin, 10 of them consumed and
// acked by group "payments") and "failing" (2 partitions, 3 dead letters of group "workers",
// one with a binary payload).
func (e *cliEnv) seed() {
	t := e.t
	t.Helper()
	require.NoError(t, e.adm.CreateTopic(e.ctx, ordersTopic, ordersParts))
	msgs := make([]*message.Message, 30)
	for i := range msgs {
		msgs[i] = forced([]byte("order "+strconv.Itoa(i)), i%ordersParts)
	}
	require.NoError(t, e.pub.Publish(ordersTopic, msgs...))
	e.consume(ordersTopic, payments, ordersParts, 10)

	require.NoError(t, e.adm.CreateTopic(e.ctx, failing, 2))
	e.deadLetter(failing, 2,
		forced([]byte("bad 1"), 0), forced([]byte("bad 2"), 1), forced([]byte{0xff, 0x00, 0xfe}, 1))
}

// consume acks n messages of topic in group, then closes the subscriber (leases released).
func (e *cliEnv) consume(topic, group string, partitions, n int) {
	t := e.t
	sub := fastSubscriber(t, e.client, group, partitions)
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	for range n {
		select {
		case m := <-ch:
			m.Ack()
		case <-ctx.Done():
			t.Fatalf("consumed fewer than %d messages of %q", n, topic)
		}
	}
	require.NoError(t, sub.Close())
}

// deadLetter publishes msgs to topic and dead-letters every one in group "workers".
func (e *cliEnv) deadLetter(topic string, partitions int, msgs ...*message.Message) {
	t := e.t
	sub := fastSubscriber(t, e.client, workers, partitions)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for m := range ch {
			_ = streamq.DeadLetter(m, errors.New("cannot parse "+m.Metadata.Get("n")))
			m.Nack()
		}
	}()
	require.NoError(t, e.pub.Publish(topic, msgs...))
	require.Eventually(t, func() bool {
		n, err := e.adm.DLQSize(e.ctx, topic)
		return err == nil && n == int64(len(msgs))
	}, 20*time.Second, 20*time.Millisecond, "DLQ of %q", topic)
	require.NoError(t, sub.Close())
	wg.Wait()
}

func TestCLIJSONMatchesAdmin(t *testing.T) {
	e := newCLIEnv(t)
	e.seed()
	ctx := e.ctx

	t.Run("topics", func(t *testing.T) {
		e := e.with(t)
		var got []topicView
		raw := e.jsonOf(&got, "topics")
		requireKeys(t, firstObject(t, raw), "topic", "partitions", "length", "groups", "dlqLength")
		names, err := e.adm.ListTopics(ctx)
		require.NoError(t, err)
		require.Len(t, got, len(names))
		for i, want := range []string{failing, ordersTopic} { // sorted
			q, err := e.adm.QueueInfo(ctx, want)
			require.NoError(t, err)
			assert.Equal(t, topicView{Topic: want, Partitions: q.Partitions, Length: q.Length, Groups: q.Groups, DLQLength: q.DLQLength}, got[i])
		}
		assert.Equal(t, int64(30), got[1].Length)
		assert.Equal(t, int64(3), got[0].DLQLength)
	})

	t.Run("info", func(t *testing.T) {
		e := e.with(t)
		var got infoView
		raw := e.jsonOf(&got, "info", ordersTopic)
		requireKeys(t, raw, "topic", "partitions", "length", "firstId", "lastId", "groups", "dlqLength", "perPartition",
			"retention", "overMaxLen")
		q, err := e.adm.QueueInfo(ctx, ordersTopic)
		require.NoError(t, err)
		assert.Equal(t, q.Topic, got.Topic)
		assert.Equal(t, q.Partitions, got.Partitions)
		assert.Equal(t, q.Length, got.Length)
		assert.Equal(t, q.FirstID, got.FirstID)
		assert.Equal(t, q.LastID, got.LastID)
		assert.Equal(t, q.Groups, got.Groups)
		assert.Equal(t, q.DLQLength, got.DLQLength)
		r := q.Retention
		assert.Equal(t, retentionView{MaxLen: r.MaxLen, Exact: r.Exact, Policy: r.Policy, Recorded: r.Recorded}, got.Retention)
		assert.Equal(t, retentionView{MaxLen: admin.DefaultMaxLen, Policy: "acked", Recorded: true}, got.Retention,
			"what the seed's Publisher recorded")
		require.Len(t, got.PerPartition, ordersParts)
		for i, p := range q.PerPartition {
			g := got.PerPartition[i]
			assert.Equal(t, partitionInfoView{
				Partition: p.Partition, Stream: p.Stream, Length: p.Length, Entries: p.Entries, FirstID: p.FirstID, LastID: p.LastID,
				Groups: p.Groups, DLQLength: p.DLQLength,
			}, g, "nothing over the default max length: no holder")
			assert.Equal(t, int64(30/ordersParts+boolInt(i < 30%ordersParts)), g.Length)
		}
	})

	t.Run("stats", func(t *testing.T) {
		e := e.with(t)
		var got statsView
		raw := e.jsonOf(&got, "stats", ordersTopic, payments)
		requireKeys(t, raw, "topic", "group", "members", "pending", "lag", "timeLagMs", "partitions")
		var obj struct{ Partitions []json.RawMessage }
		require.NoError(t, json.Unmarshal(raw, &obj))
		requireKeys(t, obj.Partitions[0], "partition", "pending", "lag", "lagExact", "lastDeliveredId",
			"entriesRead", "redisConsumers", "leaseOwner", "leaseTtlMs", "timeLagMs", "commitFrontier", "trimLost")
		s, err := e.adm.GroupStats(ctx, ordersTopic, payments)
		require.NoError(t, err)
		assert.Equal(t, s.Topic, got.Topic)
		assert.Equal(t, s.Group, got.Group)
		assert.Equal(t, nonNil(s.Members), got.Members)
		assert.Equal(t, s.Pending, got.Pending)
		assert.Equal(t, s.Lag, got.Lag)
		assert.InDelta(t, s.TimeLag.Milliseconds(), got.TimeLagMs, 2000, "ages read a moment apart")
		require.Len(t, got.Partitions, len(s.Partitions))
		for i, p := range s.Partitions {
			g := got.Partitions[i]
			assert.Equal(t, p.Partition, g.Partition)
			assert.Equal(t, p.Pending, g.Pending)
			assert.Equal(t, p.Lag, g.Lag)
			assert.Equal(t, p.LagExact, g.LagExact)
			assert.Equal(t, p.LastDeliveredID, g.LastDeliveredID)
			assert.Equal(t, p.EntriesRead, g.EntriesRead)
			assert.Equal(t, p.Consumers, g.RedisConsumers)
			assert.Equal(t, p.LeaseOwner, g.LeaseOwner)
			assert.InDelta(t, p.TimeLag.Milliseconds(), g.TimeLagMs, 2000)
			assert.Equal(t, p.CommitFrontier, g.CommitFrontier)
		}
		// 10 of 30 acked: what is neither acked nor pending is lag.
		assert.Equal(t, int64(30-10), got.Lag+got.Pending)
	})

	t.Run("lag", func(t *testing.T) {
		e := e.with(t)
		var got lagView
		raw := e.jsonOf(&got, "lag", ordersTopic, payments)
		requireKeys(t, raw, "topic", "group", "lag", "lagExact", "partitions")
		requireKeys(t, raw, "timeLagMs", "pending", "pendingAgeMs", "skipped", "time")
		s, err := e.adm.GroupLag(ctx, ordersTopic, payments)
		require.NoError(t, err)
		assert.Equal(t, s.Lag, got.Lag)
		assert.True(t, got.LagExact)
		assert.Equal(t, s.Pending, got.Pending)
		require.Len(t, got.Partitions, len(s.Partitions))
		var sum int64
		for i, p := range s.Partitions {
			g := got.Partitions[i]
			assert.InDelta(t, ms(p.TimeLag), g.TimeLagMs, 2000, "ages read a moment apart")
			assert.InDelta(t, ms(p.PendingAge), g.PendingAgeMs, 2000)
			g.TimeLagMs, g.PendingAgeMs = 0, 0
			assert.Equal(t, partitionLagView{Partition: p.Partition, Lag: p.Lag, LagExact: p.Exact, OldestID: p.OldestID,
				Pending: p.Pending, OldestPendingID: p.OldestPendingID, LastDeliveredID: p.LastDeliveredID}, g)
			sum += g.Lag
		}
		assert.Equal(t, got.Lag, sum)
	})

	t.Run("groups", func(t *testing.T) {
		e := e.with(t)
		var got []groupView
		e.jsonOf(&got, "groups", ordersTopic)
		groups, err := e.adm.ConsumerGroups(ctx, ordersTopic)
		require.NoError(t, err)
		require.Len(t, got, len(groups))
		for i, g := range groups {
			assert.InDelta(t, ms(g.TimeLag), got[i].TimeLagMs, 2000, "ages read a moment apart")
			assert.InDelta(t, ms(g.PendingAge), got[i].PendingAgeMs, 2000)
			got[i].TimeLagMs, got[i].PendingAgeMs = 0, 0
			assert.Equal(t, groupView{Name: g.Name, Consumers: g.Consumers, RedisConsumers: g.RedisConsumers, Pending: g.Pending,
				Lag: g.Lag, LagUnknown: g.LagUnknown, Expired: g.Expired, LastSeen: rfc3339(g.LastSeen)}, got[i])
		}
	})

	t.Run("dlq list", func(t *testing.T) {
		e := e.with(t)
		var got []deadLetterView
		raw := e.jsonOf(&got, "dlq", "list", failing, "--oldest-first")
		requireKeys(t, firstObject(t, raw), "topic", "partition", "id", "uuid", "payload", "payloadEncoding", "metadata",
			"reason", "group", "retryCount", "maxRetries", "originalMessageId", "originalStreamId", "timestamp", "failedAt", "raw")
		dead, err := e.adm.DLQEntries(ctx, failing, 100)
		require.NoError(t, err)
		require.Len(t, got, 3)
		require.Len(t, dead, 3)
		encodings := map[string]int{}
		for i, d := range dead {
			g := got[i]
			assert.Equal(t, d.Topic, g.Topic)
			assert.Equal(t, d.Partition, g.Partition)
			assert.Equal(t, d.ID, g.ID)
			assert.Equal(t, d.UUID, g.UUID)
			assert.Equal(t, d.Metadata, g.Metadata)
			assert.Equal(t, d.Reason, g.Reason)
			assert.Equal(t, workers, g.Group)
			assert.Equal(t, d.RetryCount, g.RetryCount)
			assert.Equal(t, d.OriginalMessageID, g.OriginalMessageID)
			assert.Equal(t, d.OriginalStreamID, g.OriginalStreamID)
			assert.Equal(t, d.FailedAt.UnixMilli(), time.Time(g.FailedAt).UnixMilli())
			encodings[g.PayloadEncoding]++
			payload := []byte(g.Payload)
			if g.PayloadEncoding == "base64" {
				payload, err = base64.StdEncoding.DecodeString(g.Payload)
				require.NoError(t, err)
			}
			assert.Equal(t, d.Payload, payload)
			assert.Contains(t, g.Reason, "cannot parse")
		}
		assert.Equal(t, map[string]int{"utf8": 2, "base64": 1}, encodings)

		// The wide table shows the binary payload as base64 and every row.
		table := e.ok("dlq", "list", failing, "-o", "wide")
		assert.Contains(t, table, "base64:/wD+")
		assert.Equal(t, 4, strings.Count(table, "\n"), table)
	})

	t.Run("tables", func(t *testing.T) {
		e := e.with(t)
		out := e.ok("topics")
		assert.Regexp(t, `(?m)^TOPIC\s+PARTITIONS\s+LENGTH\s+RETRIES\s+GROUPS\s+DLQ$`, out)
		assert.Regexp(t, `(?m)^orders\s+4\s+30\s+0\s+1\s+0$`, out)
		assert.Contains(t, e.ok("stats", ordersTopic, payments), "TOTAL")
		assert.Regexp(t, `(?m)^PARTITION\s+LAG\s+TIME LAG\s+PENDING\s+PENDING AGE$`, e.ok("lag", ordersTopic, payments))
		assert.Regexp(t, `(?m)^TOTAL\s+\d+\s+\S+\s+\d+\s+\S+$`, e.ok("lag", ordersTopic, payments))
		assert.Contains(t, e.ok("info", ordersTopic), "PARTITION")
		assert.Equal(t, "3\n", e.ok("dlq", "size", failing))
		assert.Contains(t, e.ok("dlq", "topics"), failing)
		assert.Equal(t, 1+5, strings.Count(e.ok("recent", ordersTopic, "-n", "5"), "\n"))
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestCLIDeleteTopicNeedsConfirmation(t *testing.T) {
	e := newCLIEnv(t)
	require.NoError(t, e.adm.CreateTopic(e.ctx, ordersTopic, 2))
	require.NoError(t, e.pub.Publish(ordersTopic, forced([]byte("x"), 0), forced([]byte("y"), 1)))

	// stdin is not a terminal under exec: no --yes, no deletion.
	r := e.run("delete-topic", ordersTopic)
	assert.Equal(t, exitUsage, r.code, r.stderr)
	assert.Contains(t, r.stderr, "--yes")
	assert.Contains(t, r.stderr, "not a terminal")
	assert.Empty(t, r.stdout)
	q, err := e.adm.QueueInfo(e.ctx, ordersTopic)
	require.NoError(t, err, "the topic is still there")
	assert.Equal(t, int64(2), q.Length)

	// Same with a pipe on stdin carrying "y": only a terminal may confirm.
	cmd := e.command(e.ctx, "delete-topic", ordersTopic)
	cmd.Stdin = strings.NewReader("y\n")
	r = runCmd(t, cmd)
	assert.Equal(t, exitUsage, r.code, r.stderr)
	_, err = e.adm.QueueInfo(e.ctx, ordersTopic)
	require.NoError(t, err)

	var got deletedTopicView
	e.jsonOf(&got, "delete-topic", ordersTopic, "--yes")
	assert.Equal(t, ordersTopic, got.Topic)
	assert.Positive(t, got.KeysRemoved)
	assert.Len(t, got.Keys, got.KeysRemoved)
	_, err = e.adm.QueueInfo(e.ctx, ordersTopic)
	require.ErrorIs(t, err, admin.ErrTopicNotFound)
	left, err := e.client.Keys(e.ctx, "*{"+ordersTopic+"*").Result()
	require.NoError(t, err)
	assert.Empty(t, left)

	// Again: it is gone.
	r = e.run("delete-topic", ordersTopic, "--yes")
	assert.Equal(t, exitNotFound, r.code, r.stderr)
}

func TestCLIDestructiveOperations(t *testing.T) {
	e := newCLIEnv(t)
	e.seed()

	for _, args := range [][]string{
		{"trim", ordersTopic, "--maxlen", "4"},
		{"reset-offset", ordersTopic, payments, "beginning"},
		{"partitions", "grow", ordersTopic, "8"},
		{"delete-group", ordersTopic, payments},
		{"dlq", "clear", failing},
		{"dlq", "replay-all", failing, "--delete"},
	} {
		r := e.run(args...)
		assert.Equal(t, exitUsage, r.code, "%v without --yes: %s", args, r.stderr)
		assert.Contains(t, r.stderr, "pass --yes", "%v", args)
	}

	var reset resetView
	e.jsonOf(&reset, "reset-offset", ordersTopic, payments, "beginning", "--yes")
	assert.Equal(t, ordersParts, reset.Partitions)
	assert.True(t, reset.PendingKept)
	assert.Contains(t, reset.Note, "pending entries kept")
	s, err := e.adm.GroupStats(e.ctx, ordersTopic, payments)
	require.NoError(t, err)
	assert.Equal(t, int64(30), s.Lag, "everything is undelivered again")
	assert.Contains(t, e.ok("reset-offset", ordersTopic, payments, "latest", "-y"), "pending entries kept")

	var trimmed trimView
	e.jsonOf(&trimmed, "trim", ordersTopic, "--maxlen", "4", "--yes")
	assert.Equal(t, int64(26), trimmed.Removed)
	q, err := e.adm.QueueInfo(e.ctx, ordersTopic)
	require.NoError(t, err)
	assert.Equal(t, int64(4), q.Length)
	e.jsonOf(&trimmed, "trim", ordersTopic, "--older-than", "1ms", "--page-size", "1", "--yes")
	assert.Equal(t, int64(4), trimmed.Removed)

	var grown growView
	e.jsonOf(&grown, "partitions", "grow", ordersTopic, "6", "--yes")
	assert.Equal(t, growView{Topic: ordersTopic, Previous: ordersParts, Partitions: 6}, grown)
	r := e.run("partitions", "grow", ordersTopic, "6", "--yes")
	assert.Equal(t, exitUsage, r.code, "grow only")

	dead, err := e.adm.DLQEntries(e.ctx, failing, 0)
	require.NoError(t, err)
	var bad1 admin.DeadLetter
	for _, d := range dead {
		if strings.HasSuffix(d.Reason, "bad 1") {
			bad1 = d
		}
	}
	require.NotEmpty(t, bad1.ID, "dead letter of \"bad 1\" in %+v", dead)
	var one replayView
	e.jsonOf(&one, "dlq", "replay", failing, strconv.Itoa(bad1.Partition), bad1.ID)
	assert.NotEmpty(t, one.NewID)
	assert.Equal(t, "3\n", e.ok("dlq", "size", failing), "replay keeps the dead letter")
	var all replayAllView
	e.jsonOf(&all, "dlq", "replay-all", failing, "--reason-contains", "bad 2", "--group", workers, "--delete", "--yes")
	assert.Equal(t, 1, all.Replayed)
	assert.Equal(t, "2\n", e.ok("dlq", "size", failing))
	assert.Contains(t, e.ok("dlq", "delete", failing, strconv.Itoa(bad1.Partition), bad1.ID, "--yes"), "deleted dead letter")
	var cleared dlqClearView
	e.jsonOf(&cleared, "dlq", "clear", failing, "--yes")
	assert.Equal(t, int64(1), cleared.Removed)

	var dg deletedGroupView
	e.jsonOf(&dg, "delete-group", ordersTopic, payments, "--yes")
	assert.Equal(t, 6, dg.Partitions)
	_, err = e.adm.GroupStats(e.ctx, ordersTopic, payments)
	require.ErrorIs(t, err, admin.ErrGroupNotFound)
}

func TestCLIExitCodes(t *testing.T) {
	e := newCLIEnv(t)
	require.NoError(t, e.adm.CreateTopic(e.ctx, ordersTopic, 2))
	require.NoError(t, e.pub.Publish(ordersTopic, forced([]byte("x"), 0)))

	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"bogus flag", []string{"topics", "--bogus"}, exitUsage, "unknown flag: --bogus"},
		{"bogus global flag", []string{"--bogus", "topics"}, exitUsage, "--bogus"},
		{"bad flag value", []string{"pending", ordersTopic, "g", "--min-idle", "soon"}, exitUsage, "--min-idle"},
		{"bad sort", []string{"pending", ordersTopic, "g", "--sort", "size"}, exitUsage, "--sort"},
		{"missing argument", []string{"stats", ordersTopic}, exitUsage, "missing argument GROUP"},
		{"extra argument", []string{"info", ordersTopic, "more"}, exitUsage, `unexpected argument "more"`},
		{"unknown command", []string{"nope"}, exitUsage, `unknown command "nope"`},
		{"unknown subcommand", []string{"dlq", "nope"}, exitUsage, `unknown command "nope" for "streamq dlq"`},
		{"no subcommand", []string{"dlq"}, exitUsage, "Usage: streamq dlq [command]"},
		{"no command", []string{}, exitUsage, "Usage: streamq [command]"},
		{"bad offset", []string{"reset-offset", ordersTopic, "g", "yesterday", "--yes"}, exitUsage, "offset"},
		{"bad partition", []string{"range", ordersTopic, "7"}, exitUsage, "partition 7"},
		{"trim without mode", []string{"trim", ordersTopic}, exitUsage, "--maxlen"},
		{"required flag", []string{"create-topic", "t"}, exitUsage, `"partitions"`},
		{"unknown topic", []string{"info", "nope"}, exitNotFound, "topic not found"},
		{"unknown group", []string{"stats", ordersTopic, "nobody"}, exitNotFound, "consumer group not found"},
		{"unknown dead letter", []string{"dlq", "show", ordersTopic, "0", "1-1"}, exitNotFound, "entry not found"},
		{"unknown dead letter delete", []string{"dlq", "delete", ordersTopic, "0", "1-1", "--yes"}, exitNotFound, "not found"},
		{"topic exists", []string{"create-topic", ordersTopic, "--partitions", "2"}, exitError, "already exists"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.run(c.args...)
			assert.Equal(t, c.code, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			assert.Contains(t, r.stderr, c.stderr)
		})
	}

	t.Run("unreachable redis", func(t *testing.T) {
		cmd := exec.Command(binary, "--redis-url", "redis://127.0.0.1:1", "topics")
		cmd.Env = envWithout("REDIS_URL")
		r := runCmd(t, cmd)
		assert.Equal(t, exitError, r.code)
		assert.Contains(t, r.stderr, "cannot reach Redis at redis://127.0.0.1:1")
	})
	t.Run("REDIS_URL", func(t *testing.T) {
		cmd := exec.Command(binary, "topics", "--json")
		cmd.Env = append(envWithout("REDIS_URL"), "REDIS_URL="+e.url)
		r := runCmd(t, cmd)
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stdout, `"topic": "orders"`)
	})
	t.Run("password is not printed", func(t *testing.T) {
		cmd := exec.Command(binary, "--redis-url", "redis://user:s3cret@127.0.0.1:1", "topics")
		cmd.Env = envWithout("REDIS_URL")
		r := runCmd(t, cmd)
		assert.Equal(t, exitError, r.code)
		assert.NotContains(t, r.stderr, "s3cret")
	})
}

// tailProcess is a running "streamq tail".
type tailProcess struct {
	cmd        *exec.Cmd
	stdout     syncBuffer
	stderr     syncBuffer
	ready      chan struct{} // closed when tail said it is following the topic
	stderrDone chan struct{} // closed when stderr reached EOF
}

func (e *cliEnv) startTail(ctx context.Context, args ...string) *tailProcess {
	t := e.t
	t.Helper()
	tp := &tailProcess{cmd: e.command(ctx, append([]string{"tail"}, args...)...), ready: make(chan struct{}), stderrDone: make(chan struct{})}
	tp.cmd.Stdout = &tp.stdout
	pipe, err := tp.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, tp.cmd.Start())
	go func() {
		defer close(tp.stderrDone)
		sc := bufio.NewScanner(pipe)
		signalled := false
		for sc.Scan() {
			_, _ = tp.stderr.Write([]byte(sc.Text() + "\n"))
			if !signalled && strings.HasPrefix(sc.Text(), "tailing topic") {
				signalled = true
				close(tp.ready)
			}
		}
	}()
	select {
	case <-tp.ready:
	case <-tp.stderrDone:
		t.Fatalf("tail exited before it started: %s", tp.stderr.String())
	case <-ctx.Done():
		t.Fatal("tail did not start")
	}
	return tp
}

// wait waits for the process and returns its error.
func (tp *tailProcess) wait() error {
	<-tp.stderrDone // all reads from the pipe done before Wait
	return tp.cmd.Wait()
}

func TestCLITail(t *testing.T) {
	e := newCLIEnv(t)
	require.NoError(t, e.adm.CreateTopic(e.ctx, ordersTopic, ordersParts))
	before := forced([]byte("before"), 1)
	require.NoError(t, e.pub.Publish(ordersTopic, before))

	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	tp := e.startTail(ctx, ordersTopic, "--count", "3", "--json")
	var want []string
	for i := range 3 {
		m := forced([]byte("live "+strconv.Itoa(i)), i%ordersParts)
		want = append(want, m.UUID)
		require.NoError(t, e.pub.Publish(ordersTopic, m))
	}
	require.NoError(t, tp.wait(), "stderr: %s", tp.stderr.String())

	lines := strings.Split(strings.TrimSpace(tp.stdout.String()), "\n")
	require.Len(t, lines, 3, tp.stdout.String())
	var got []string
	for i, l := range lines {
		var v entryView
		require.NoError(t, json.Unmarshal([]byte(l), &v), l)
		got = append(got, v.UUID)
		assert.Equal(t, "live "+strconv.Itoa(i), v.Payload)
		assert.Equal(t, i%ordersParts, v.Partition)
		assert.Equal(t, "utf8", v.PayloadEncoding)
		assert.Equal(t, ordersTopic, v.Topic)
	}
	assert.Equal(t, want, got, "only entries published after tail started, in order")
	assert.NotContains(t, got, before.UUID)

	// From the beginning, as a table: the four entries, then stop.
	out := e.ok("tail", ordersTopic, "--from", "beginning", "--count", "4")
	assert.Equal(t, 4, strings.Count(out, "\n"), out)
	assert.Contains(t, out, "before")
	assert.Contains(t, out, "live 2")

	// Stopped with Ctrl-C: exit code 0.
	tp = e.startTail(ctx, ordersTopic)
	require.NoError(t, tp.cmd.Process.Signal(os.Interrupt))
	require.NoError(t, tp.wait(), "tail exits 0 on Ctrl-C; stderr: %s", tp.stderr.String())
}

func TestCLICompletion(t *testing.T) {
	e := newCLIEnv(t)
	require.NoError(t, e.adm.CreateTopic(e.ctx, ordersTopic, 1))
	require.NoError(t, e.adm.CreateTopic(e.ctx, "other", 1))

	out := e.ok("completion", "bash")
	assert.Contains(t, out, "bash completion")
	assert.Contains(t, out, "__start_streamq")
	for _, shell := range []string{"zsh", "fish", "powershell"} {
		assert.NotEmpty(t, e.ok("completion", shell), shell)
	}

	// Topic names come from Redis (the shell passes the command line typed so far).
	cmd := exec.Command(binary, "__complete", "--redis-url", e.url, "info", "or")
	cmd.Env = envWithout("REDIS_URL")
	r := runCmd(t, cmd)
	require.Equal(t, exitOK, r.code, r.stderr)
	out = r.stdout
	assert.Contains(t, out, "orders\n")
	assert.NotContains(t, out, "other")
}

func TestCLIDemoBinary(t *testing.T) {
	cmd := exec.Command(binary, "demo", "--messages", "8", "--keys", "2", "--partitions", "2")
	cmd.Env = envWithout("REDIS_URL")
	r := runCmd(t, cmd)
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "no REDIS_URL set: using an embedded miniredis")
	assert.Contains(t, r.stdout, "per-key order kept: yes")
}

func TestProgressDraw(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, label: "replaying", unit: "dead letters", total: 4, start: time.Now().Add(-2 * time.Second)}
	p.set(1)
	p.draw(0)
	assert.Contains(t, b.String(), "replaying [#######.......................] 1/4 dead letters  25%")
	assert.Contains(t, b.String(), "25% 2s, ETA 6s", "the time left at the pace so far")
	b.Reset()
	p.about, p.total = true, 2
	p.set(3)
	p.draw(0)
	assert.Contains(t, b.String(), "3/~2 dead letters  75%", "an estimate passed: not done yet")
	b.Reset()
	p.total, p.about = 0, false
	p.set(1)
	p.add(2)
	p.draw(1)
	assert.Contains(t, b.String(), "replaying / 3 dead letters")
}
