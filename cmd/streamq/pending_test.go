package main

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
)

// TestCLIPendingOrder: pending sorts by --sort in the sort's own direction, and --order asc
// or desc turns it; a bad --order is a usage error.
func TestCLIPendingOrder(t *testing.T) {
	e := newCLIEnv(t)
	const topic, group = "jobs", "w"
	require.NoError(t, e.adm.CreateTopic(e.ctx, topic, 1))
	stream := keys.New("", "").PartitionStream(topic, 0)
	idles := []time.Duration{20 * time.Second, 50 * time.Second, 10 * time.Second}
	for i := range idles {
		require.NoError(t, e.client.XAdd(e.ctx, &redis.XAddArgs{Stream: stream, Values: []string{"n", strconv.Itoa(i)}}).Err())
	}
	e.group(stream, group)
	res, err := e.client.XReadGroup(e.ctx, &redis.XReadGroupArgs{
		Group: group, Consumer: "c", Streams: []string{stream, ">"}, Count: 10, Block: -1,
	}).Result()
	require.NoError(t, err)
	for i, m := range res[0].Messages {
		require.NoError(t, e.client.Do(e.ctx, "XCLAIM", stream, group, "c", 0, m.ID,
			"IDLE", idles[i].Milliseconds(), "RETRYCOUNT", i+1, "JUSTID").Err())
	}
	tests := []struct {
		name string
		args []string
		want []int64 // idle of each entry, in seconds, in order
	}{
		{"default: longest idle first", nil, []int64{50, 20, 10}},
		{"idle ascending", []string{"--order", "asc"}, []int64{10, 20, 50}},
		{"deliveries ascending", []string{"--sort", "deliveries", "--order", "asc"}, []int64{20, 50, 10}},
		{"deliveries, the sort's own", []string{"--sort", "deliveries"}, []int64{10, 50, 20}},
		{"id descending", []string{"--sort", "id", "--order", "desc"}, []int64{10, 50, 20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []pendingView
			e.with(t).jsonOf(&got, append([]string{"pending", topic, group, "--json"}, tt.args...)...)
			secs := make([]int64, len(got))
			for i, p := range got {
				secs[i] = p.IdleMs / 1000 / 10 * 10 // Redis' clock moves on meanwhile
			}
			assert.Equal(t, tt.want, secs)
		})
	}
	r := e.run("pending", topic, group, "--order", "up")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "--order")
}
