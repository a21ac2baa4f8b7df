package scenario_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/chaos"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// idempotencyModes are the Publisher's two idempotent appends.
var idempotencyModes = []struct {
	name string
	idem streamq.IdempotencyConfig
}{{"by sequence", streamq.IdempotencyConfig{}}, {"by UUID", streamq.IdempotencyConfig{ByUUID: true}}}

// restartModes are the ways Redis goes down between a send and its resend, and what it keeps.
var restartModes = []struct {
	name string
	conf []string // redis.conf lines after redistest's (AOF, everysec, no RDB saves)
	// saveFirst: the RDB snapshot is taken before the send, so the restart loses the send
	saveFirst bool
	restart   func(ctx context.Context, srv *redistest.Server, direct *redis.Client) error
	kept      bool // the restarted Redis holds the send's appends
}{
	{name: "AOF rewritten, then SHUTDOWN", kept: true, restart: func(ctx context.Context, srv *redistest.Server, direct *redis.Client) error {
		if err := rewriteAOF(ctx, direct); err != nil {
			return err
		}
		return srv.Restart()
	}},
	{name: "RDB only, saved after the send, then kill -9", conf: []string{"appendonly no"}, kept: true,
		restart: func(ctx context.Context, srv *redistest.Server, direct *redis.Client) error {
			if err := direct.Save(ctx).Err(); err != nil {
				return err
			}
			return killAndStart(srv)
		}},
	{name: "RDB only, saved before the send, then kill -9", conf: []string{"appendonly no"}, saveFirst: true,
		restart: func(_ context.Context, srv *redistest.Server, _ *redis.Client) error { return killAndStart(srv) }},
}

// TestIdempotentPublishThroughRedisRestart: a Publish whose reply is lost after Redis ran it,
// Redis restarted, and the caller publishing the same messages again until Publish succeeds.
// With the default idempotent append (by producer and sequence) and by UUID, each message is
// in its partition once whatever the restart kept: when the restarted Redis holds the first
// appends (AOF rewritten then a shutdown; an RDB snapshot after the send) the resend appends
// nothing, and when it lost them (a snapshot before the send) it lost their records with them
// and the resend appends each once.
func TestIdempotentPublishThroughRedisRestart(t *testing.T) {
	t.Parallel()
	for _, rm := range restartModes {
		for _, im := range idempotencyModes {
			t.Run(rm.name+"/"+im.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				srv := redistest.StartWith(t, rm.conf...)
				direct := srv.Client(t)
				proxy, client := lossyClient(t, srv)
				const topic, partitions = "restart", 4
				pub := quietPublisher(t, client, partitions, im.idem)
				require.NoError(t, pub.Publish(topic, batch("before", 8)...))
				if rm.saveFirst {
					require.NoError(t, direct.Save(ctx).Err())
				}

				msgs := batch("lost", 20)
				proxy.LoseReplies(1)
				require.Error(t, pub.Publish(topic, msgs...), "the reply was lost")
				total, _ := partitionEntries(t, direct, topic, partitions)
				require.Equal(t, 28, total, "Redis ran the send whose reply was lost")

				require.NoError(t, rm.restart(ctx, srv, direct))
				if !rm.kept {
					total, _ = partitionEntries(t, direct, topic, partitions)
					require.Equal(t, 8, total, "the restart lost the send")
				}
				publishUntilAccepted(t, pub, topic, msgs)

				total, uuids := partitionEntries(t, direct, topic, partitions)
				assert.Equal(t, 28, total, "each message appended once")
				assert.Len(t, uuids, 28)
			})
		}
	}
}

// TestIdempotentResendAfterAckedAndDeleted: a Publish whose reply is lost, its messages
// consumed and acked by a group that deletes what it acked (Acks.DeletePolicy immediate),
// then the same messages published again: nothing is appended again and no group sees them
// twice; Publish reports no new entry for them (by UUID it reports the first append's id).
func TestIdempotentResendAfterAckedAndDeleted(t *testing.T) {
	t.Parallel()
	for _, im := range idempotencyModes {
		t.Run(im.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			srv := redistest.Start(t)
			direct := srv.Client(t)
			proxy, client := lossyClient(t, srv)
			const topic, partitions = "deleted", 2
			pub := quietPublisher(t, client, partitions, im.idem)
			cfg := streamqtest.FastSub(direct, "g")
			cfg.DefaultPartitionCount = partitions
			cfg.Acks.DeletePolicy = streamq.AckDeleteImmediate
			sub := streamqtest.NewSubscriber(t, cfg)
			require.NoError(t, sub.SubscribeInitialize(topic))
			require.NoError(t, pub.Publish(topic, batch("before", 1)...)) // the topic's setup, before any loss

			msgs := batch("m", 10)
			proxy.LoseReplies(1)
			require.Error(t, pub.Publish(topic, msgs...), "the reply was lost")
			ch, err := sub.Subscribe(ctx, topic)
			require.NoError(t, err)
			rec := streamqtest.NewRecorder()
			streamqtest.ConsumeInto(ch, rec)
			rec.WaitUnique(t, 11, 20*time.Second)
			require.Eventually(t, func() bool {
				total, _ := partitionEntries(t, direct, topic, partitions)
				return total == 0
			}, 10*time.Second, 20*time.Millisecond, "acked entries are deleted")
			last := lastIDs(t, direct, topic, partitions)

			publishUntilAccepted(t, pub, topic, msgs)
			for _, m := range msgs {
				p, ok := streamq.PublishedPartition(m)
				require.True(t, ok, "message %s: Publish reports its partition", m.UUID)
				if id, ok := streamq.PublishedStreamID(m); ok {
					assert.False(t, idAfter(t, id, last[p]), "message %s: reported %s, a new entry (the last was %s)", m.UUID, id, last[p])
				}
			}
			assert.Equal(t, last, lastIDs(t, direct, topic, partitions), "nothing appended again")
			total, _ := partitionEntries(t, direct, topic, partitions)
			assert.Zero(t, total)
			assert.Never(t, func() bool { return len(rec.Snapshot()) > 11 }, 500*time.Millisecond, 20*time.Millisecond,
				"each message delivered once (a second delivery would show within the subscriber's 50 ms reads)")
		})
	}
}

// lossyClient is a client of srv through a chaos proxy that can lose replies, which does not
// send a command again itself (MaxRetries -1): a lost reply fails Publish, and the caller
// publishes again.
func lossyClient(t *testing.T, srv *redistest.Server) (*chaos.Proxy, *redis.Client) {
	t.Helper()
	proxy, err := chaos.Listen(srv.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })
	client := redis.NewClient(&redis.Options{Addr: proxy.Addr(), MaxRetries: -1, DisableIdentity: true})
	t.Cleanup(func() { _ = client.Close() })
	return proxy, client
}

// quietPublisher publishes through the lossy client with nothing of its own on it: the
// memory watch, started by the first Publish, reads INFO on the same client, and a reply the
// test means the Publish to lose would be its reply instead (the Publish then succeeds).
func quietPublisher(t *testing.T, client *redis.Client, partitions int, idem streamq.IdempotencyConfig) *streamq.Publisher {
	t.Helper()
	return streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions,
		Idempotency: idem, Memory: streamq.MemoryWatch{Interval: -1}})
}

// batch is n new messages named prefix-i, spread over partitions by their keys.
func batch(prefix string, n int) []*message.Message {
	msgs := make([]*message.Message, n)
	for i := range msgs {
		msgs[i] = message.NewMessage(watermill.NewUUID(), []byte(fmt.Sprintf("%s-%d", prefix, i)))
		msgs[i].Metadata.Set(streamq.PartitionKeyMetadata, "k"+strconv.Itoa(i))
	}
	return msgs
}

// publishUntilAccepted publishes msgs again until Publish succeeds (connections the restart
// broke fail the first tries; each try is a resend of the same messages).
func publishUntilAccepted(t *testing.T, pub *streamq.Publisher, topic string, msgs []*message.Message) {
	t.Helper()
	var err error
	require.Eventually(t, func() bool {
		err = pub.Publish(topic, msgs...)
		return err == nil
	}, 20*time.Second, 50*time.Millisecond, "Publish after the restart: %v", &err)
}

// partitionEntries counts the entries of the topic's partitions and their distinct UUIDs.
func partitionEntries(t *testing.T, rdb *redis.Client, topic string, partitions int) (int, map[string]bool) {
	t.Helper()
	entries := streamqtest.Entries(t, rdb, topic, partitions)
	uuids := map[string]bool{}
	for _, e := range entries {
		uuids[fmt.Sprint(e.Values[streamq.UUIDField])] = true
	}
	return len(entries), uuids
}

// lastIDs are the last ids generated in each partition (XINFO STREAM), which a new append
// would move.
func lastIDs(t *testing.T, rdb *redis.Client, topic string, partitions int) map[int]string {
	t.Helper()
	out := map[int]string{}
	space := keys.New("", "")
	for p := range partitions {
		info, err := rdb.XInfoStream(context.Background(), space.PartitionStream(topic, p)).Result()
		require.NoError(t, err)
		out[p] = info.LastGeneratedID
	}
	return out
}

// idAfter reports whether stream id a comes after b.
func idAfter(t *testing.T, a, b string) bool {
	t.Helper()
	x, y := idParts(t, a), idParts(t, b)
	return x[0] > y[0] || (x[0] == y[0] && x[1] > y[1])
}

// idParts are a stream id's milliseconds and sequence.
func idParts(t *testing.T, id string) [2]int64 {
	t.Helper()
	ms, seq, ok := strings.Cut(id, "-")
	require.True(t, ok, "stream id %q", id)
	a, err := strconv.ParseInt(ms, 10, 64)
	require.NoError(t, err)
	b, err := strconv.ParseInt(seq, 10, 64)
	require.NoError(t, err)
	return [2]int64{a, b}
}

// rewriteAOF rewrites the AOF (BGREWRITEAOF) and waits until the rewrite finished.
func rewriteAOF(ctx context.Context, rdb *redis.Client) error {
	if err := rdb.BgRewriteAOF(ctx).Err(); err != nil {
		return err
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		info, err := rdb.Info(ctx, "persistence").Result()
		if err != nil {
			return err
		}
		if strings.Contains(info, "aof_rewrite_in_progress:0") && strings.Contains(info, "aof_rewrite_scheduled:0") &&
			strings.Contains(info, "aof_last_bgrewrite_status:ok") {
			return nil
		}
		select {
		case <-tick.C:
		case <-deadline:
			return fmt.Errorf("AOF rewrite not finished within 10s")
		}
	}
}

// killAndStart kills redis-server (SIGKILL: nothing flushed) and starts it again.
func killAndStart(srv *redistest.Server) error {
	if err := srv.Kill(); err != nil {
		return err
	}
	return srv.Restart()
}
