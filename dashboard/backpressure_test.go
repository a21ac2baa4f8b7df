package dashboard_test

import (
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/dashboard"
	"github.com/streamq-dev/streamq/internal/partition"
)

// backPressureJSON is what GET api/topics/{topic} tells of length retention.
type backPressureJSON struct {
	Retention struct {
		MaxLen   int64  `json:"maxLen"`
		Exact    bool   `json:"exact"`
		Policy   string `json:"policy"`
		Recorded bool   `json:"recorded"`
	} `json:"retention"`
	OverMaxLen   int64 `json:"overMaxLen"`
	PerPartition []struct {
		Length      int64  `json:"length"`
		OverMaxLen  int64  `json:"overMaxLen"`
		Holder      string `json:"holder"`
		HolderNeeds string `json:"holderNeeds"`
		FirstID     string `json:"firstId"`
	} `json:"perPartition"`
}

// seedHeld creates topic with one partition of 10 entries and maxLen in its metadata, then
// creates groups at 0-0 and delivers and acks to each the number of entries in read.
func (e *env) seedHeld(topic, maxLen string, groups []string, read map[string]int64) {
	t := e.t
	t.Helper()
	require.NoError(t, e.adm.CreateTopic(e.ctx, topic, 1))
	require.NoError(t, e.client.HSet(e.ctx, e.space.Meta(topic), partition.FieldMaxLen, maxLen).Err())
	stream := e.streamKey(topic, 0)
	for i := range 10 {
		require.NoError(t, e.client.XAdd(e.ctx, &redis.XAddArgs{Stream: stream, Values: []string{"n", strconv.Itoa(i)}}).Err())
	}
	for _, g := range groups {
		require.NoError(t, e.client.XGroupCreate(e.ctx, stream, g, "0-0").Err())
		if read[g] == 0 {
			continue
		}
		res, err := e.client.XReadGroup(e.ctx, &redis.XReadGroupArgs{
			Group: g, Consumer: "c", Streams: []string{stream, ">"}, Count: read[g], Block: -1,
		}).Result()
		require.NoError(t, err)
		for _, m := range res[0].Messages {
			require.NoError(t, e.client.XAck(e.ctx, stream, g, m.ID).Err())
		}
	}
}

// TestTopicBackPressure: the topic endpoint shows the topic's length retention and, per
// partition, the entries over max length and the group holding them.
func TestTopicBackPressure(t *testing.T) {
	e := newEnv(t)
	both := []string{"fast", "slow"}
	e.seedHeld("held", "4", both, map[string]int64{"fast": 6})
	e.seedHeld("bare", "4", nil, nil)
	e.seedHeld("caught", "4", both, map[string]int64{"fast": 10, "slow": 10})
	e.seedHeld("unbounded", "-1", both, map[string]int64{"fast": 6})
	s := e.serve(dashboard.Options{})

	cases := []struct {
		topic         string
		maxLen, over  int64
		holder, needs string
	}{
		{"held", 4, 6, "slow", "first"}, // slow read nothing: it needs the first entry
		{"bare", 4, 6, "", ""},
		{"caught", 4, 6, "", ""},
		{"unbounded", -1, 0, "", ""},
	}
	for _, c := range cases {
		t.Run(c.topic, func(t *testing.T) {
			var got backPressureJSON
			s.getJSON("/api/topics/"+c.topic, &got)
			assert.Equal(t, c.maxLen, got.Retention.MaxLen)
			assert.False(t, got.Retention.Exact)
			assert.Equal(t, "acked", got.Retention.Policy)
			assert.True(t, got.Retention.Recorded)
			assert.Equal(t, c.over, got.OverMaxLen)
			require.Len(t, got.PerPartition, 1)
			p := got.PerPartition[0]
			assert.Equal(t, int64(10), p.Length)
			assert.Equal(t, c.over, p.OverMaxLen)
			assert.Equal(t, c.holder, p.Holder)
			if c.needs == "first" {
				c.needs = p.FirstID
			}
			assert.Equal(t, c.needs, p.HolderNeeds)
		})
	}
}
