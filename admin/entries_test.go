package admin_test

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
)

// TestListRecentAndRange reads entries with explicit ids over two partitions, one of them
// not in the default format.
func TestListRecentAndRange(t *testing.T) {
	e := newOpEnv(t)
	const topic = "recent"
	e.create(topic, 2)
	e.xadd(topic, 0, "1000-0", "a")
	e.xadd(topic, 1, "1000-1", "b")
	e.xadd(topic, 0, "2000-0", "c")
	e.xadd(topic, 1, "3000-0", "d")
	e.xadd(topic, 0, "3000-1", "e")
	require.NoError(t, e.client.XAdd(e.ctx, &redis.XAddArgs{
		Stream: e.space.PartitionStream(topic, 1), ID: "4000-0", Values: []string{"foo", "bar"},
	}).Err())

	recent, err := e.adm.ListRecent(e.ctx, topic, 4)
	require.NoError(t, err)
	require.Len(t, recent, 4)
	assert.Equal(t, []string{"4000-0", "3000-1", "3000-0", "2000-0"}, entryIDs(recent))
	assert.Equal(t, []int{1, 0, 1, 0}, []int{recent[0].Partition, recent[1].Partition, recent[2].Partition, recent[3].Partition})
	bad := recent[0]
	assert.NotEmpty(t, bad.Malformed)
	assert.Equal(t, map[string]string{"foo": "bar"}, bad.Fields)
	good := recent[1]
	assert.Empty(t, good.Malformed)
	assert.Equal(t, "e", good.UUID)
	assert.Equal(t, map[string]string{"k": "e"}, good.Metadata)
	assert.Equal(t, []byte("payload of e"), good.Payload)
	assert.Equal(t, len("payload of e"), good.PayloadSize)
	assert.False(t, good.Offloaded)
	assert.Empty(t, good.Fields)
	assert.Equal(t, int64(3000), good.Time.UnixMilli())
	assert.Equal(t, topic, good.Topic)

	all, err := e.adm.ListRecent(e.ctx, topic, 0)
	require.NoError(t, err)
	assert.Len(t, all, 6)

	tests := []struct {
		name       string
		p          int
		start, end string
		count      int64
		reverse    bool
		want       []string
	}{
		{"forward", 0, "", "", 0, false, []string{"1000-0", "2000-0", "3000-1"}},
		{"reverse", 0, "", "", 0, true, []string{"3000-1", "2000-0", "1000-0"}},
		{"count", 0, "-", "+", 2, false, []string{"1000-0", "2000-0"}},
		{"reverse count", 0, "-", "+", 2, true, []string{"3000-1", "2000-0"}},
		{"bounds", 1, "1000-1", "3000", 0, false, []string{"1000-1", "3000-0"}},
		{"exclusive start", 0, "(1000-0", "", 0, false, []string{"2000-0", "3000-1"}},
		{"reverse bounds", 1, "2000", "+", 1, true, []string{"4000-0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read := e.adm.Range
			if tt.reverse {
				read = e.adm.RevRange
			}
			got, err := read(e.ctx, topic, tt.p, tt.start, tt.end, tt.count)
			require.NoError(t, err)
			assert.Equal(t, tt.want, entryIDs(got))
		})
	}
	for _, p := range []int{-1, 2} {
		_, err := e.adm.Range(e.ctx, topic, p, "", "", 0)
		assert.ErrorIs(t, err, admin.ErrInvalidArgument)
	}
	_, err = e.adm.Range(e.ctx, topic, 0, "yesterday", "", 0)
	assert.ErrorIs(t, err, admin.ErrInvalidArgument)
}

// TestEntryOffloadedPayload publishes a payload above the Publisher's threshold: the entry
// reports it offloaded, with its size and reference, and no payload.
func TestEntryOffloadedPayload(t *testing.T) {
	e := newOpEnv(t)
	const topic = "big"
	e.create(topic, 1)
	pub := e.publisher(streamq.PublisherConfig{Payloads: streamq.PayloadConfig{Threshold: 16}})
	big := opMsg(strings.Repeat("x", 100), 0)
	small := opMsg("tiny", 0)
	require.NoError(t, pub.Publish(topic, big))
	require.NoError(t, pub.Publish(topic, small))

	got, err := e.adm.Range(e.ctx, topic, 0, "", "", 0)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, big.UUID, got[0].UUID)
	assert.True(t, got[0].Offloaded)
	assert.Empty(t, got[0].Payload)
	assert.Equal(t, 100, got[0].PayloadSize)
	assert.NotEmpty(t, got[0].Fields["x-payload-hash-ref"])
	assert.Empty(t, got[0].Malformed)
	assert.Equal(t, small.UUID, got[1].UUID)
	assert.False(t, got[1].Offloaded)
	assert.Equal(t, []byte("tiny"), got[1].Payload)
	assert.Equal(t, 4, got[1].PayloadSize)
}

func entryIDs(es []admin.Entry) []string {
	out := make([]string, len(es))
	for i, x := range es {
		out[i] = x.ID
	}
	return out
}
