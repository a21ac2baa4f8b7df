package dlq

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// TestDeadLetterOfADeletedStreamWritesNothing: a lease holder that dead-letters a message
// after an operator deleted its stream (DeleteTopic with Force) gets the partition reported
// lost, and no DLQ stream is created for the deleted topic.
func TestDeadLetterOfADeletedStreamWritesNothing(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	const str, dlqStr = "stream:topic:{t:p:0}", "stream:topic:{t:p:0}:dlq"
	f := fence.Fence{Key: "streaming:mq:lease:{t:p:0}:g", Token: "me"}
	require.NoError(t, client.Set(ctx, f.Key, f.Token, time.Minute).Err())

	_, _, err := Add(ctx, client, fence.Entry{Fence: f, Stream: str, Group: "g", ID: "5-0"}, dlqStr, Record{OriginalTopic: "t", Reason: "boom", Group: "g"})
	require.ErrorIs(t, err, fence.ErrLeaseLost)
	n, err := client.Exists(ctx, str, dlqStr).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "no stream of the deleted partition came back")
}
