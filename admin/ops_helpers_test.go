package admin_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// opEnv is a Redis of its own with an Admin and a Publisher, for the topic and group
// operation tests.
type opEnv struct {
	t      *testing.T
	ctx    context.Context
	client *redis.Client
	adm    *admin.Admin
	pub    *streamq.Publisher
	space  keys.Space
}

func newOpEnv(t *testing.T) *opEnv {
	t.Helper()
	client := redistest.Start(t).Client(t)
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	e := &opEnv{t: t, ctx: context.Background(), client: client, adm: adm, space: keys.New("", "")}
	e.pub = e.publisher(streamq.PublisherConfig{})
	return e
}

// publisher starts a Publisher on the env's client, closed at cleanup.
func (e *opEnv) publisher(cfg streamq.PublisherConfig) *streamq.Publisher {
	cfg.Client = e.client
	pub, err := streamq.NewPublisher(cfg, watermill.NopLogger{})
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = pub.Close() })
	return pub
}

func (e *opEnv) create(topic string, partitions int) {
	e.t.Helper()
	require.NoError(e.t, e.adm.CreateTopic(e.ctx, topic, partitions))
}

// opMsg is a message forced to partition p (none when p < 0).
func opMsg(payload string, p int) *message.Message {
	m := message.NewMessage(watermill.NewUUID(), []byte(payload))
	if p >= 0 {
		m.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(p))
	}
	return m
}

// publishRoundRobin publishes count messages, message i forced to partition i % partitions.
func (e *opEnv) publishRoundRobin(topic string, count, partitions int) {
	e.t.Helper()
	msgs := make([]*message.Message, count)
	for i := range msgs {
		msgs[i] = opMsg("m"+strconv.Itoa(i), i%partitions)
	}
	require.NoError(e.t, e.pub.Publish(topic, msgs...))
}

// xadd appends an entry of the default format with an explicit id ("*": generated).
func (e *opEnv) xadd(topic string, p int, id, uuid string) string {
	e.t.Helper()
	fields, err := codec.Encode(uuid, map[string]string{"k": uuid}, []byte("payload of "+uuid))
	require.NoError(e.t, err)
	got, err := e.client.XAdd(e.ctx, &redis.XAddArgs{Stream: e.space.PartitionStream(topic, p), ID: id, Values: fields}).Result()
	require.NoError(e.t, err)
	return got
}

func (e *opEnv) ids(topic string, p int) []string {
	e.t.Helper()
	msgs, err := e.client.XRange(e.ctx, e.space.PartitionStream(topic, p), "-", "+").Result()
	require.NoError(e.t, err)
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

func (e *opEnv) createGroup(topic string, p int, group, start string) {
	e.t.Helper()
	require.NoError(e.t, e.client.XGroupCreateMkStream(e.ctx, e.space.PartitionStream(topic, p), group, start).Err())
}

// readGroup delivers up to count new entries of partition p to consumer and returns their ids.
func (e *opEnv) readGroup(topic string, p int, group, consumer string, count int64) []string {
	e.t.Helper()
	res, err := e.client.XReadGroup(e.ctx, &redis.XReadGroupArgs{
		Group: group, Consumer: consumer, Streams: []string{e.space.PartitionStream(topic, p), ">"}, Count: count, Block: -1,
	}).Result()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	require.NoError(e.t, err)
	var out []string
	for _, m := range res[0].Messages {
		out = append(out, m.ID)
	}
	return out
}

func (e *opEnv) groupNames(stream string) map[string]redis.XInfoGroup {
	e.t.Helper()
	gs, err := e.client.XInfoGroups(e.ctx, stream).Result()
	require.NoError(e.t, err)
	out := map[string]redis.XInfoGroup{}
	for _, g := range gs {
		out[g.Name] = g
	}
	return out
}

// idMillis is the time of a stream id.
func idMillis(t *testing.T, id string) time.Time {
	t.Helper()
	ms, _, ok := cutID(id)
	require.True(t, ok, id)
	return time.UnixMilli(ms)
}

func cutID(id string) (int64, int64, bool) {
	for i := range id {
		if id[i] == '-' {
			ms, err1 := strconv.ParseInt(id[:i], 10, 64)
			seq, err2 := strconv.ParseInt(id[i+1:], 10, 64)
			return ms, seq, err1 == nil && err2 == nil
		}
	}
	return 0, 0, false
}

func redisZ(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }

// onBackends runs test as the subtests "single" (one redis-server) and "cluster" (3 masters),
// each on a Redis of its own, in parallel.
func onBackends(t *testing.T, test func(t *testing.T, client redis.UniversalClient)) {
	t.Helper()
	for name, start := range map[string]func(t *testing.T) redis.UniversalClient{
		"single":  func(t *testing.T) redis.UniversalClient { return redistest.Start(t).Client(t) },
		"cluster": func(t *testing.T) redis.UniversalClient { return redistest.StartCluster(t, 3, 0).Client(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, start(t))
		})
	}
}
