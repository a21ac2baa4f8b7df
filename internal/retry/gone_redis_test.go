package retry

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// TestRetriesOfADeletedStreamWriteNothing: a lease holder that retries a message after an
// operator deleted its stream (DeleteTopic with Force) gets the partition reported lost, and
// neither the stream, its retry index nor the group's retry set comes back.
func TestRetriesOfADeletedStreamWriteNothing(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	const str, group = "stream:topic:{t:p:0}", "g"
	f := fence.Fence{Key: "streaming:mq:lease:{t:p:0}:g", Token: "me"}
	zset, items := "streaming:mq:retry:{t:p:0}:g", "streaming:mq:retry:{t:p:0}:g:items"
	require.NoError(t, client.Set(ctx, f.Key, f.Token, time.Minute).Err())

	_, _, err := Requeue(ctx, client, fence.Entry{Fence: f, Stream: str, Group: group, ID: "5-0"}, []string{"k", "v"})
	require.ErrorIs(t, err, fence.ErrLeaseLost, "requeue")
	_, err = Schedule(ctx, client, fence.Entry{Fence: f, Stream: str, Group: group, ID: "5-0"},
		Parked{ZSet: zset, Items: items, ItemID: "item-1", Due: time.Now().Add(time.Second), Item: Item{Topic: "t", Fields: []string{"k", "v"}}})
	require.ErrorIs(t, err, fence.ErrLeaseLost, "schedule")
	n, err := client.Exists(ctx, str, keys.RetryIndex(str, group), keys.RetryCount(str), zset, items).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "nothing of the deleted partition came back")

	// The control: with the stream there, the requeue appends.
	require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: str, ID: "5-0", Values: []any{"k", "v"}}).Err())
	id, _, err := Requeue(ctx, client, fence.Entry{Fence: f, Stream: str, Group: group, ID: "5-0"}, []string{"k", "v"})
	require.NoError(t, err)
	assert.NotEmpty(t, id)
}
