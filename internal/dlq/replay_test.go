package dlq

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// TestReplaySentTwiceAppendsOnce: go-redis sends a script again when it lost the reply. An
// offloaded replay run a second time with the same payload reference appends nothing and
// answers the id of the first append.
func TestReplaySentTwiceAppendsOnce(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	space := keys.New("", "")
	dlqStream, stream := space.DLQ("t", 0), space.PartitionStream("t", 0)
	msg, err := codec.Encode("uuid-1", map[string]string{"k": "v"}, []byte(strings.Repeat("x", 100)))
	require.NoError(t, err)
	r := Record{OriginalTopic: "t", Group: "g", Headers: "{}", Message: msg}
	id, err := client.XAdd(ctx, &redis.XAddArgs{Stream: dlqStream, Values: r.Fields()}).Result()
	require.NoError(t, err)
	letter, err := client.XRange(ctx, dlqStream, id, id).Result()
	require.NoError(t, err)

	entry, err := Rebuild(letter[0].Values, id, false, Offloading{Threshold: 10, Index: space.PayloadIndex("t", 0),
		Key: func(ref string) string { return space.Payload("t", 0, ref) }})
	require.NoError(t, err)
	require.NotNil(t, entry.Stored)
	args := ReplayArgs{DLQStream: dlqStream, Stream: stream, ID: id, Entry: entry}
	first, err := Replay(ctx, client, args)
	require.NoError(t, err)
	again, err := Replay(ctx, client, args)
	require.NoError(t, err)
	assert.Equal(t, first, again, "the second run answers the first append's id")
	assert.Equal(t, int64(1), client.XLen(ctx, stream).Val(), "appended once")
	assert.Equal(t, strings.Repeat("x", 100), client.Get(ctx, entry.Stored.Key).Val())
	assert.Equal(t, []string{first + "|" + entry.Stored.Ref}, client.ZRange(ctx, entry.Stored.Index, 0, -1).Val())
	got := client.XRange(ctx, stream, first, first).Val()
	require.Len(t, got, 1)
	assert.Equal(t, entry.Stored.Ref, payload.Ref(got[0].Values))
}
