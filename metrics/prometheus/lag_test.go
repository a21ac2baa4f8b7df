package prometheus_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/metrics/prometheus"
)

func TestLagCollectorExportsAdminLag(t *testing.T) {
	srv := redistest.Start(t)
	client := srv.Client(t)
	ctx := context.Background()
	const topic, group = "lagged", "billing"

	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	require.NoError(t, adm.CreateTopic(ctx, topic, 2))
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client}, nil)
	require.NoError(t, err)
	defer pub.Close()
	for i := 0; i < 30; i++ {
		m := message.NewMessage(watermill.NewUUID(), []byte("x"))
		m.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(i%2))
		require.NoError(t, pub.Publish(topic, m))
	}
	// The group reads 10 entries of partition 0 (delivered, not acked) and nothing of 1.
	space := keys.New("", "")
	for p := 0; p < 2; p++ {
		require.NoError(t, client.XGroupCreate(ctx, space.PartitionStream(topic, p), group, "0").Err())
	}
	_, err = client.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: "c",
		Streams: []string{space.PartitionStream(topic, 0), ">"}, Count: 10}).Result()
	require.NoError(t, err)

	reg := prom.NewRegistry()
	require.NoError(t, reg.Register(prometheus.NewLagCollector(adm, "", 0,
		prometheus.LagTarget{Topic: topic, Group: group}, prometheus.LagTarget{Topic: "missing", Group: group})))
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
			got[f.GetName()][key] = m.GetGauge().GetValue()
		}
	}

	stats, err := adm.GroupStats(ctx, topic, group)
	require.NoError(t, err)
	require.Len(t, stats.Partitions, 2)
	for _, p := range stats.Partitions {
		key := "group=" + group + ",partition=" + strconv.Itoa(p.Partition) + ",topic=" + topic + ","
		assert.Equal(t, float64(p.Lag), got["streamq_lag"][key], "partition %d", p.Partition)
		assert.Equal(t, float64(p.Pending), got["streamq_pending"][key])
	}
	assert.Equal(t, 5.0, got["streamq_lag"]["group="+group+",partition=0,topic="+topic+","], "15 - 10 read")
	assert.Equal(t, 15.0, got["streamq_lag"]["group="+group+",partition=1,topic="+topic+","])
	assert.Equal(t, 10.0, got["streamq_pending"]["group="+group+",partition=0,topic="+topic+","])
	assert.Equal(t, 0.0, got["streamq_lag_scrape_errors"]["group="+group+",topic="+topic+","])
	assert.Equal(t, 1.0, got["streamq_lag_scrape_errors"]["group="+group+",topic=missing,"], "unknown topic reported, not fatal")
}
