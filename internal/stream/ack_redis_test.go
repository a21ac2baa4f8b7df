package stream

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// TestAckOnADeletedStreamWritesNothing: a lease holder whose stream an operator deleted
// (DeleteTopic with Force) flushes its acks late; the ack reports the partition lost and
// writes no commit frontier back, so the topic stays deleted.
func TestAckOnADeletedStreamWritesNothing(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	k := AckKeys{Lease: "streaming:mq:lease:{t:p:0}:g", Stream: "stream:topic:{t:p:0}",
		Commit: "streaming:mq:commit:{t:p:0}", PayloadIndex: "stream:topic:{t:p:0}:payloads"}
	require.NoError(t, client.Set(ctx, k.Lease, "me", time.Minute).Err())
	entries := []Acked{{ID: "5-0"}}

	err := Ack(ctx, client, AckBatch{Keys: k, Token: "me", Group: "g", Policy: "none", AckSetTTL: time.Minute, Frontier: "5-0", Entries: entries})
	require.ErrorIs(t, err, fence.ErrLeaseLost)
	n, err := client.Exists(ctx, k.Stream, k.Commit).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "neither the stream nor the commit frontier was written")

	// The control: with the stream there, the same ack moves the frontier.
	require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: k.Stream, ID: "5-0", Values: []any{"k", "v"}}).Err())
	require.NoError(t, client.XGroupCreate(ctx, k.Stream, "g", "0").Err())
	require.NoError(t, Ack(ctx, client, AckBatch{Keys: k, Token: "me", Group: "g", Policy: "none", AckSetTTL: time.Minute, Frontier: "5-0", Entries: entries}))
	assert.Equal(t, "5-0", client.HGet(ctx, k.Commit, "g").Val())
}
