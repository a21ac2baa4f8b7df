package admin_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
)

// failAll runs group on topic with cfg, nacking every message, until the topic's DLQ holds
// want entries.
func (e *env) failAll(topic string, cfg streamq.SubscriberConfig, want int64) {
	t := e.t
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := streamq.NewSubscriber(cfg, watermill.NopLogger{})
	require.NoError(t, err)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for m := range ch {
			m.Nack()
		}
	}()
	require.Eventually(t, func() bool { return e.size(topic) == want }, 20*time.Second, 20*time.Millisecond,
		"DLQ of %q never reached %d entries", topic, want)
	require.NoError(t, sub.Close())
	wg.Wait()
}

// TestOtherGroupsRetriesAreNotLag: group "workers" nacks every message of a topic, retrying
// each twice, at once (requeue.lua) on one topic and after a backoff (the retry set and
// move.lua) on another, then the dead letters are replayed to it (replay.lua). Group "audit",
// which has read nothing, keeps the lag and time lag it had before: the retries and replays
// are skipped entries, not lag. The topic's length and published count are the 30 messages
// published; the retries are their own figure.
func TestOtherGroupsRetriesAreNotLag(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backoff time.Duration
	}{{"requeued", 0}, {"scheduled", 100 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			const topic = "retried"
			require.NoError(t, e.adm.CreateTopic(ctx, topic, 2))
			for p := range 2 {
				require.NoError(t, e.client.XGroupCreateMkStream(ctx, e.space.PartitionStream(topic, p), "audit", "0").Err())
			}
			for i := range 30 {
				require.NoError(t, e.pub.Publish(topic, msg("m"+strconv.Itoa(i), "retry", "", i%2)))
			}
			before, err := e.adm.GroupLag(ctx, topic, "audit")
			require.NoError(t, err)
			require.Equal(t, int64(30), before.Lag)

			cfg := fastSub(e.client, workers, 2)
			cfg.Retry.Policy = streamq.ExponentialBackoff{Attempts: 2, Base: tc.backoff, Max: tc.backoff}
			e.failAll(topic, cfg, 30)
			require.Equal(t, int64(90), e.totalStreamLen(topic, 2), "30 published, 60 retries")

			after, err := e.adm.GroupLag(ctx, topic, "audit")
			require.NoError(t, err)
			assert.Equal(t, before.Lag, after.Lag)
			assert.True(t, after.Exact)
			assert.Equal(t, int64(60), after.Skipped)
			for p, part := range after.Partitions {
				assert.Equal(t, before.Partitions[p].OldestID, part.OldestID, "partition %d", p)
			}
			assert.InDelta(t, before.TimeLag.Seconds(), after.TimeLag.Seconds(), 25, "the age of the same first entry")

			tl, err := e.adm.TopicLag(ctx, topic)
			require.NoError(t, err)
			assert.Equal(t, int64(30), tl.Length)
			assert.Equal(t, int64(60), tl.Retries)
			assert.Equal(t, int64(30), tl.Published)
			assert.Equal(t, int64(60), tl.RetriesAdded)
			c, err := e.adm.TopicCounters(ctx, topic)
			require.NoError(t, err)
			assert.Equal(t, int64(90), c.EntriesAdded, "XINFO entries-added counts the retries")
			assert.Equal(t, int64(30), c.Published, "the publish rate's counter does not")
			assert.Equal(t, int64(60), c.RetriesAdded)
			assert.Equal(t, int64(30), c.Length)
			assert.Equal(t, int64(60), c.Retries)
			assert.Equal(t, before.Lag, c.Groups["audit"].Lag)
			q, err := e.adm.QueueInfo(ctx, topic)
			require.NoError(t, err)
			assert.Equal(t, [3]int64{30, 60, 90}, [3]int64{q.Length, q.Retries, q.Entries}, "length, retries, entries")
			byGroup := map[string]admin.GroupLag{}
			for _, g := range tl.Groups {
				byGroup[g.Group] = g
			}
			assert.Equal(t, after.Lag, byGroup["audit"].Lag)
			assert.Zero(t, byGroup[workers].Lag, "the failing group delivered everything")

			replayed, err := e.adm.ReplayAll(ctx, topic, 0, nil, admin.ReplayOptions{})
			require.NoError(t, err)
			require.Equal(t, 30, replayed)
			replay, err := e.adm.GroupLag(ctx, topic, "audit")
			require.NoError(t, err)
			assert.Equal(t, before.Lag, replay.Lag, "replays to the failing group are not audit's lag")
			assert.Equal(t, int64(90), replay.Skipped)
			w, err := e.adm.GroupLag(ctx, topic, workers)
			require.NoError(t, err)
			assert.Equal(t, int64(30), w.Lag, "the replays are the failing group's to deliver")
			tl, err = e.adm.TopicLag(ctx, topic)
			require.NoError(t, err)
			assert.Equal(t, int64(30), tl.Length)
			assert.Equal(t, int64(90), tl.Retries)
			assert.Equal(t, int64(30), tl.Published)
		})
	}
}
