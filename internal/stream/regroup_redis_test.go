package stream

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// TestRegroupReportsARetriedCreationOnce runs the recreation step as go-redis does when a
// reply is lost: the same call twice. Both report the creation at the same position; another
// call finds the group there and creates nothing.
func TestRegroupReportsARetriedCreationOnce(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	const str, commit, group = "stream:topic:{t:p:0}", "streaming:mq:commit:{t:p:0}", "g"
	require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: str, ID: "5-0", Values: []any{"k", "v"}}).Err())
	require.NoError(t, client.HSet(ctx, commit, group, "3-0").Err())
	run := func(token string) []any {
		res, err := regroupScript.Run(ctx, client, []string{str, commit, keys.RegisteredGroups(str), keys.Regrouped(str)},
			group, "", "$", token).Slice()
		require.NoError(t, err)
		return res
	}
	assert.Equal(t, []any{int64(1), "3-0"}, run("call-1"), "created at the commit frontier")
	assert.Equal(t, []any{int64(1), "3-0"}, run("call-1"), "the same call again: reported as made")
	assert.Equal(t, []any{int64(0), ""}, run("call-2"), "another call: the group exists")

	created, _, err := Regroup(ctx, client, Lost{Stream: str, Commit: commit, Group: group, StartID: "$"})
	require.NoError(t, err)
	assert.False(t, created)
	ttl, err := client.PTTL(ctx, keys.Regrouped(str)).Result()
	require.NoError(t, err)
	assert.Positive(t, ttl, "the marks expire")
}
