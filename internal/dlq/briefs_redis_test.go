package dlq

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/stream"
)

// TestBriefs: Briefs reads each dead letter's id, reason, group and failure time, newest
// first, within its bounds and count; an entry without those fields (written by hand) reads
// as empty with its id's time; it works at maxmemory; a bad id is stream.ErrInvalidID.
func TestBriefs(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	dlqStream := keys.New("", "").DLQ("t", 0)
	failed := time.UnixMilli(1_700_000_000_000)
	var ids []string
	for i := range 5 {
		msg, err := codec.Encode("uuid-"+strconv.Itoa(i), map[string]string{"k": "v"}, []byte(strings.Repeat("p", 10000)))
		require.NoError(t, err)
		r := Record{OriginalTopic: "t", Reason: "reason " + strconv.Itoa(i%2), Group: "g" + strconv.Itoa(i), FailedAt: failed.Add(time.Duration(i) * time.Second), Headers: "{}", Message: msg}
		id, err := Write(ctx, client, dlqStream, r)
		require.NoError(t, err)
		ids = append(ids, id)
	}
	hand, err := client.XAdd(ctx, &redis.XAddArgs{Stream: dlqStream, ID: "1800000000000-0", Values: []any{"only", "this"}}).Result()
	require.NoError(t, err)

	all, err := Briefs(ctx, client, dlqStream, "+", "-", 100)
	require.NoError(t, err)
	require.Len(t, all, 6)
	assert.Equal(t, Brief{ID: hand, FailedAt: time.UnixMilli(1_800_000_000_000)}, all[0], "no fields: empty, the id's time")
	for i, b := range all[1:] {
		n := 4 - i
		assert.Equal(t, Brief{ID: ids[n], Reason: "reason " + strconv.Itoa(n%2), Group: "g" + strconv.Itoa(n), FailedAt: failed.Add(time.Duration(n) * time.Second)}, b)
	}

	page, err := Briefs(ctx, client, dlqStream, "("+ids[3], ids[1], 2)
	require.NoError(t, err)
	require.Len(t, page, 2)
	assert.Equal(t, []string{ids[2], ids[1]}, []string{page[0].ID, page[1].ID}, "after ids[3], newest first, at most 2")

	require.NoError(t, client.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	require.NoError(t, client.ConfigSet(ctx, "maxmemory", "1").Err())
	full, err := Briefs(ctx, client, dlqStream, "+", "-", 100)
	require.NoError(t, client.ConfigSet(ctx, "maxmemory", "0").Err())
	require.NoError(t, err, "a read runs at maxmemory")
	assert.Len(t, full, 6)

	_, err = Briefs(ctx, client, dlqStream, "+", "nope", 10)
	require.ErrorIs(t, err, stream.ErrInvalidID)
}
