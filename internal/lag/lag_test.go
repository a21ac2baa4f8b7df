package lag

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamid"
)

func TestLowerBound(t *testing.T) {
	for _, c := range []struct {
		name, position string
		info           *stream.Info
		want           string
	}{
		{"after the position", "5-1", &stream.Info{FirstID: "3-0"}, "(" + streamid.Key("5-1")},
		{"below the first entry", "1-0", &stream.Info{FirstID: "3-0"}, "[" + streamid.Key("3-0")},
		{"at 0-0", "0-0", &stream.Info{FirstID: "3-0"}, "[" + streamid.Key("3-0")},
		{"empty stream", "0-0", &stream.Info{}, "(" + streamid.Key("0-0")},
		{"never written", "0-0", nil, "(" + streamid.Key("0-0")},
	} {
		assert.Equal(t, c.want, lowerBound(c.position, c.info), c.name)
	}
}

// seed appends published entries ("p") and retries of group "a" ("r", indexed and counted as
// the scripts do) to partition 0 of topic, in the order of kinds, and returns their ids.
func seed(t *testing.T, client *redis.Client, space keys.Space, topic, kinds string) []string {
	t.Helper()
	ctx := context.Background()
	str := space.PartitionStream(topic, 0)
	ids := make([]string, len(kinds))
	for i, k := range kinds {
		id, err := client.XAdd(ctx, &redis.XAddArgs{Stream: str, Values: []string{"kind", string(k)}}).Result()
		require.NoError(t, err)
		ids[i] = id
		if k == 'r' {
			require.NoError(t, client.ZAdd(ctx, keys.RetryIndex(str, "a"), redis.Z{Member: streamid.Key(id)}).Err())
			require.NoError(t, client.HIncrBy(ctx, keys.RetryCount(str), "a", 1).Err())
		}
	}
	require.NoError(t, client.XGroupCreate(ctx, str, "a", "$").Err())
	return ids
}

// TestReadSkipsOtherGroupsRetries: group "b" behind a run of "a"'s retries has as lag the
// published entries only, its oldest entry past the retries (the walk), and none at all when
// only retries are left; what the partition holds and ever had is told apart.
func TestReadSkipsOtherGroupsRetries(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	space := keys.New("", "")
	ids := seed(t, client, space, "t", "prrrprr")
	str := space.PartitionStream("t", 0)
	require.NoError(t, client.XGroupCreate(ctx, str, "b", ids[0]).Err())
	require.NoError(t, client.XGroupCreate(ctx, str, "done", ids[4]).Err())

	s, err := Read(ctx, client, space, "t", 1, "")
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), s.Now, 10*time.Second)
	p := s.Partitions[0]
	assert.Equal(t, int64(5), p.Retries)
	assert.Equal(t, int64(2), p.Published())
	assert.Equal(t, int64(2), p.PublishedAdded())
	byName := map[string]Group{}
	for _, g := range p.Groups {
		byName[g.Name] = g
	}
	assert.Equal(t, Group{Name: "b", LastDelivered: ids[0], Lag: 1, Exact: true, Skipped: 5, Oldest: ids[4]}, byName["b"],
		"past three retries of a to the published entry")
	assert.Equal(t, Group{Name: "done", LastDelivered: ids[4], Exact: true, Skipped: 2}, byName["done"],
		"only a's retries are left: nothing to deliver, no oldest entry")
	assert.Equal(t, Group{Name: "a", LastDelivered: ids[6], Exact: true}, byName["a"])

	only, err := Read(ctx, client, space, "t", 1, "b")
	require.NoError(t, err)
	assert.Equal(t, []Group{byName["b"]}, only.Partitions[0].Groups)
}

// TestReadBoundsTheWalk: more than ScanLimit retries of another group before the first
// published entry: the oldest entry is the last one walked and the lag is not exact.
func TestReadBoundsTheWalk(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	space := keys.New("", "")
	str := space.PartitionStream("t", 0)
	first := seed(t, client, space, "t", "p")[0]
	pipe := client.Pipeline()
	for range ScanLimit + 5 {
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: str, Values: []string{"kind", "r"}})
	}
	cmds, err := pipe.Exec(ctx)
	require.NoError(t, err)
	for _, c := range cmds {
		require.NoError(t, client.ZAdd(ctx, keys.RetryIndex(str, "a"), redis.Z{Member: streamid.Key(c.(*redis.StringCmd).Val())}).Err())
	}
	require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: str, Values: []string{"kind", "p"}}).Err())
	require.NoError(t, client.XGroupCreate(ctx, str, "b", first).Err())

	s, err := Read(ctx, client, space, "t", 1, "b")
	require.NoError(t, err)
	g := s.Partitions[0].Groups[0]
	assert.Equal(t, int64(1), g.Lag)
	assert.False(t, g.Exact, "the walk stopped at the bound")
	assert.Equal(t, cmds[ScanLimit].(*redis.StringCmd).Val(), g.Oldest, "the last entry walked")
}
