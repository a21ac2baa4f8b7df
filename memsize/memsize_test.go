//go:build memsize

package memsize

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/server"
)

// Flags of TestMemSize (go test -tags memsize ./memsize -memsize.count=100000 ...).
var (
	flagCount   = flag.Int("memsize.count", 100_000, "messages per inline payload size")
	flagOffload = flag.Int("memsize.offload-count", 2_000, "messages of the offloaded payload size")
)

const (
	topic      = "sizing"
	group      = "sizing-group"
	partitions = 8
	batch      = 100 // messages per Publish call
	offloaded  = 100 << 10
)

// sizeCase is one payload size and how many messages of it are appended.
type sizeCase struct {
	label   string
	payload int
	count   int
}

func cases() []sizeCase {
	return []sizeCase{
		{"16 B", 16, *flagCount},
		{"256 B", 256, *flagCount},
		{"1 KiB", 1 << 10, *flagCount},
		{"4 KiB", 4 << 10, *flagCount},
		{"100 KiB (offloaded)", offloaded, *flagOffload},
	}
}

// usage is what one run measured, in bytes of used_memory and MEMORY USAGE.
type usage struct {
	before, after, withoutRecords int64 // used_memory
	streams, records, payloads    int64 // MEMORY USAGE sums by key kind, after the append
}

// TestMemSize measures and prints the table: see the package documentation.
func TestMemSize(t *testing.T) {
	type row struct {
		c               sizeCase
		idem, seq, none usage // by UUID, by sequence (the default), off
	}
	var rows []row
	for _, c := range cases() {
		r := row{c: c}
		t.Run(c.label+"/by UUID", func(t *testing.T) { r.idem = measure(t, c, streamq.IdempotencyConfig{ByUUID: true}) })
		t.Run(c.label+"/by sequence", func(t *testing.T) { r.seq = measure(t, c, streamq.IdempotencyConfig{}) })
		t.Run(c.label+"/window -1", func(t *testing.T) { r.none = measure(t, c, streamq.IdempotencyConfig{Window: -1}) })
		rows = append(rows, r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nRedis memory per stream entry: %d partitions, one consumer group registered, nothing consumed; a Publisher of each idempotency mode, Publish calls of %d; redis-server %s\n\n",
		partitions, batch, redisVersion(t))
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "payload\tmessages\tdefault (by sequence)\tby UUID, records held\trecords expired\twindow -1\toverhead over payload\trecord (used_memory)\trecord (MEMORY USAGE)\trecords' share\tstream\tpayload keys\t7 days at 100 msg/s\t\n")
	for _, r := range rows {
		n := int64(r.c.count)
		held, gone, none := (r.idem.after-r.idem.before)/n, (r.idem.withoutRecords-r.idem.before)/n, (r.none.after-r.none.before)/n
		seq := (r.seq.after - r.seq.before) / n
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.0f %%\t%d\t%d\t%s\t\n", r.c.label, n, seq, held, gone, none, gone-int64(r.c.payload),
			held-gone, r.idem.records/n, 100*float64(held-gone)/float64(held), r.idem.streams/n, r.idem.payloads/n,
			gib(week(gone, r.idem.records/n)))
	}
	w.Flush()
	fmt.Fprintln(&b, "\nbytes/entry: INFO used_memory after the append minus before, over the messages; default: idempotent by producer and")
	fmt.Fprintln(&b, "sequence (a few keys per partition, whatever the rate); by UUID: Idempotency.ByUUID; records expired: the idempotency")
	fmt.Fprintln(&b, "buckets deleted, as their expiry does; window -1: a fresh server, Idempotency.Window -1; overhead: records expired minus")
	fmt.Fprintln(&b, "the payload; record: what the idempotency records add per message; stream and payload keys: MEMORY USAGE (SAMPLES 0)")
	fmt.Fprintf(&b, "per entry; 7 days: %d entries at the records-expired figure plus %s of records (1.5 windows of traffic)\n",
		weekEntries, (3 * defaultWindow / 2).String())
	fmt.Print(b.String())
}

// defaultWindow is the Publisher's default Idempotency.Window.
const defaultWindow = 2 * time.Minute

// A 7-day consumer outage at 100 msg/s: its backlog, and the records of the last 1.5
// idempotency windows (the most the Publisher's buckets hold at once).
const (
	weekRate    = 100
	weekEntries = weekRate * 7 * 24 * 3600
)

func week(perEntry, perRecord int64) int64 {
	held := int64(weekRate * (3 * defaultWindow / 2).Seconds())
	return weekEntries*perEntry + held*perRecord
}

func gib(n int64) string { return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30)) }

// measure runs one case on a fresh redis-server with the given idempotency.
func measure(t *testing.T, c sizeCase, idem streamq.IdempotencyConfig) usage {
	ctx := context.Background()
	srv := redistest.StartWith(t, "appendonly no")
	direct := srv.Client(t)
	register(t, srv)
	var u usage
	u.before = usedMemory(t, ctx, direct)
	publish(t, srv, c, idem)
	checkBacklog(t, ctx, direct, c.count)
	u.after = usedMemory(t, ctx, direct)
	u.streams, u.records, u.payloads = keyUsage(t, ctx, direct)
	deleteRecords(t, ctx, direct)
	u.withoutRecords = usedMemory(t, ctx, direct)
	return u
}

// register creates the topic and registers the group on every partition, with a Subscriber
// that is closed again: a consumer that is down.
func register(t *testing.T, srv *redistest.Server) {
	client := srv.Client(t)
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{Client: client, ConsumerGroup: group,
		DefaultPartitionCount: partitions}, watermill.NopLogger{})
	must(t, err)
	must(t, sub.SubscribeInitialize(topic))
	must(t, sub.Close())
	must(t, client.Close())
}

// publish appends c.count messages of c.payload random bytes, then closes the publisher and
// its connections (their buffers are not the backlog's).
func publish(t *testing.T, srv *redistest.Server, c sizeCase, idem streamq.IdempotencyConfig) {
	client := srv.Client(t)
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions,
		Idempotency: idem}, watermill.NopLogger{})
	must(t, err)
	for sent := 0; sent < c.count; sent += batch {
		msgs := make([]*message.Message, min(batch, c.count-sent))
		for i := range msgs {
			payload := make([]byte, c.payload)
			_, _ = rand.Read(payload)
			msgs[i] = message.NewMessage(watermill.NewUUID(), payload)
		}
		must(t, pub.Publish(topic, msgs...))
	}
	must(t, pub.Close())
	must(t, client.Close())
}

// checkBacklog fails unless the partitions hold every message, none read by the group.
func checkBacklog(t *testing.T, ctx context.Context, c *redis.Client, want int) {
	space := keys.New("", "")
	var n int64
	for p := 0; p < partitions; p++ {
		n += c.XLen(ctx, space.PartitionStream(topic, p)).Val()
		groups, err := c.XInfoGroups(ctx, space.PartitionStream(topic, p)).Result()
		must(t, err)
		if len(groups) != 1 || groups[0].EntriesRead > 0 {
			t.Fatalf("partition %d: groups %+v, want %s registered and nothing read", p, groups, group)
		}
	}
	if n != int64(want) {
		t.Fatalf("the partitions hold %d entries, want %d", n, want)
	}
}

// usedMemory reads used_memory once the server has settled (clients closed).
func usedMemory(t *testing.T, ctx context.Context, c *redis.Client) int64 {
	time.Sleep(500 * time.Millisecond) // a measurement program, not a loop: let closed clients go
	m := server.MemoryOfKey(ctx, c, "")
	must(t, m.Err)
	return m.Used
}

// keyUsage sums MEMORY USAGE of the partitions' streams, the idempotency buckets and the
// payload keys (with their index).
func keyUsage(t *testing.T, ctx context.Context, c *redis.Client) (streams, records, payloads int64) {
	space := keys.New("", "")
	for p := 0; p < partitions; p++ {
		streams += memoryUsage(t, ctx, c, space.PartitionStream(topic, p))
	}
	records = sumUsage(t, ctx, c, space.Control+":idem:*") + sumUsage(t, ctx, c, space.Control+":producer:*")
	payloads = sumUsage(t, ctx, c, space.Control+":payload:*")
	return streams, records, payloads
}

func sumUsage(t *testing.T, ctx context.Context, c *redis.Client, match string) int64 {
	var n int64
	iter := c.Scan(ctx, 0, match, 1000).Iterator()
	for iter.Next(ctx) {
		n += memoryUsage(t, ctx, c, iter.Val())
	}
	must(t, iter.Err())
	return n
}

func memoryUsage(t *testing.T, ctx context.Context, c *redis.Client, key string) int64 {
	n, err := c.MemoryUsage(ctx, key, 0).Result()
	must(t, err)
	return n
}

// deleteRecords deletes the idempotency buckets and producer keys: what their expiry does.
func deleteRecords(t *testing.T, ctx context.Context, c *redis.Client) {
	for _, match := range []string{":idem:*", ":producer:*"} {
		iter := c.Scan(ctx, 0, keys.New("", "").Control+match, 1000).Iterator()
		for iter.Next(ctx) {
			must(t, c.Del(ctx, iter.Val()).Err())
		}
		must(t, iter.Err())
	}
}

func redisVersion(t *testing.T) string {
	srv := redistest.StartWith(t, "appendonly no")
	info, err := srv.Client(t).Info(context.Background(), "server").Result()
	must(t, err)
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "redis_version:"); ok {
			return v
		}
	}
	return "?"
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
