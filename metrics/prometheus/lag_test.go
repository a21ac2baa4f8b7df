package prometheus_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	prom "github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/metrics/prometheus"
)

// TestLagCollectorExportsAdminLag: a backlog of 30 entries written 3 minutes ago over 2
// partitions; group "billing" read 10 of partition 0 and acked none; group "workers" nacked
// every message once (30 retry entries, then the DLQ). The collector exports what
// admin.TopicLag reads: billing's lag (the backlog, not workers' retries), its time lag and
// oldest pending age of about 3 minutes, the skipped retries, and the topic's 30 published
// messages and 30 retries as their own figures.
func TestLagCollectorExportsAdminLag(t *testing.T) {
	srv := redistest.Start(t)
	client := srv.Client(t)
	ctx := context.Background()
	const topic, group = "lagged", "billing"

	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	require.NoError(t, adm.CreateTopic(ctx, topic, 2))
	space := keys.New("", "")
	start := time.Now().Add(-3 * time.Minute).UnixMilli()
	for i := range 30 {
		fields, err := codec.Encode(watermill.NewUUID(), nil, []byte("x"))
		require.NoError(t, err)
		require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: space.PartitionStream(topic, i%2),
			ID: strconv.FormatInt(start+int64(i), 10) + "-0", Values: fields}).Err())
	}
	for p := 0; p < 2; p++ {
		require.NoError(t, client.XGroupCreate(ctx, space.PartitionStream(topic, p), group, "0").Err())
	}
	_, err = client.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: "c",
		Streams: []string{space.PartitionStream(topic, 0), ">"}, Count: 10}).Result()
	require.NoError(t, err)
	nackAll(t, client, adm, topic, 30)

	reg := prom.NewRegistry()
	require.NoError(t, reg.Register(prometheus.NewLagCollector(adm, "", 0,
		prometheus.LagTarget{Topic: topic, Group: group}, prometheus.LagTarget{Topic: topic, Group: "workers"},
		prometheus.LagTarget{Topic: "missing", Group: group})))
	got := gatherValues(t, reg)
	tl, err := adm.TopicLag(ctx, topic)
	require.NoError(t, err)

	billing := groupLag(t, tl, group)
	require.Len(t, billing.Partitions, 2)
	for _, p := range billing.Partitions {
		key := "group=" + group + ",partition=" + strconv.Itoa(p.Partition) + ",topic=" + topic + ","
		assert.Equal(t, float64(p.Lag), got["streamq_lag"][key], "partition %d", p.Partition)
		assert.Equal(t, float64(p.Pending), got["streamq_pending"][key])
		assert.Equal(t, float64(p.Skipped), got["streamq_lag_skipped"][key])
		assert.InDelta(t, p.TimeLag.Seconds(), got["streamq_lag_seconds"][key], 2)
		assert.InDelta(t, p.PendingAge.Seconds(), got["streamq_pending_age_seconds"][key], 2)
		assert.InDelta(t, 180, got["streamq_lag_seconds"][key], 10, "3 minutes behind")
		assert.Equal(t, 15.0, got["streamq_lag_skipped"][key], "workers' retries")
	}
	p0 := "group=" + group + ",partition=0,topic=" + topic + ","
	assert.Equal(t, 5.0, got["streamq_lag"][p0], "15 - 10 read")
	assert.Equal(t, 15.0, got["streamq_lag"]["group="+group+",partition=1,topic="+topic+","])
	assert.Equal(t, 10.0, got["streamq_pending"][p0])
	assert.InDelta(t, 180, got["streamq_pending_age_seconds"][p0], 10)
	assert.Equal(t, 0.0, got["streamq_lag"]["group=workers,partition=0,topic="+topic+","])

	assert.Equal(t, map[string]float64{"topic=" + topic + ",": 30}, got["streamq_topic_length"])
	assert.Equal(t, map[string]float64{"topic=" + topic + ",": 30}, got["streamq_topic_retries"])
	assert.Equal(t, map[string]float64{"topic=" + topic + ",": 30}, got["streamq_topic_published_total"])
	assert.Equal(t, map[string]float64{"topic=" + topic + ",": 30}, got["streamq_topic_retries_appended_total"])
	assert.Equal(t, float64(tl.Length), got["streamq_topic_length"]["topic="+topic+","])
	assert.Equal(t, 0.0, got["streamq_lag_scrape_errors"]["group="+group+",topic="+topic+","])
	assert.Equal(t, 1.0, got["streamq_lag_scrape_errors"]["group="+group+",topic=missing,"], "unknown topic reported, not fatal")
}

func groupLag(t *testing.T, tl admin.TopicLag, group string) admin.GroupLag {
	t.Helper()
	for _, g := range tl.Groups {
		if g.Group == group {
			return g
		}
	}
	t.Fatalf("group %q not in %+v", group, tl.Groups)
	return admin.GroupLag{}
}

// nackAll runs group "workers" on topic, nacking every message: one retry each, then the DLQ,
// until it holds want dead letters.
func nackAll(t *testing.T, client redis.UniversalClient, adm *admin.Admin, topic string, want int64) {
	t.Helper()
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
		Client: client, ConsumerGroup: "workers", Read: streamq.ReadConfig{BlockTime: 50 * time.Millisecond}, Membership: streamq.MembershipConfig{RebalanceInterval: 100 * time.Millisecond},
		Retry: streamq.RetryConfig{Policy: streamq.ExponentialBackoff{Attempts: 1}},
	}, watermill.NopLogger{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
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
	require.Eventually(t, func() bool {
		n, err := adm.DLQSize(ctx, topic)
		return err == nil && n == want
	}, 20*time.Second, 20*time.Millisecond)
	require.NoError(t, sub.Close())
	wg.Wait()
}

// gatherValues maps metric name -> "label=value,..." -> value, for gauges and counters.
func gatherValues(t *testing.T, reg *prom.Registry) map[string]map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			key := ""
			for _, l := range m.GetLabel() {
				key += l.GetName() + "=" + l.GetValue() + ","
			}
			if got[f.GetName()] == nil {
				got[f.GetName()] = map[string]float64{}
			}
			got[f.GetName()][key] = value(f.GetType(), m)
		}
	}
	return got
}

func value(kind dto.MetricType, m *dto.Metric) float64 {
	if kind == dto.MetricType_COUNTER {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}
