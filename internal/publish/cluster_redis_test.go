package publish

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// TestAppendOnceClusterSlots: on a 3-master cluster one Flush appends, plainly, offloaded and
// idempotently, to partitions served by different masters: every key a script touches
// (stream, payload index, UUID buckets, payload keys) is in its partition's slot, and the
// idempotent appends sent again are duplicates there.
func TestAppendOnceClusterSlots(t *testing.T) {
	t.Parallel()
	cluster := redistest.StartCluster(t, 3, 0)
	client := cluster.Client(t)
	ctx := context.Background()
	require.NoError(t, LoadScripts(ctx, client))

	const parts = 6
	var writes, onceWrites []Write
	masters := map[string]bool{}
	for i := range parts {
		p := partOf(i)
		slot, err := client.ClusterKeySlot(ctx, p.stream).Result()
		require.NoError(t, err)
		master, err := cluster.MasterOf(int(slot))
		require.NoError(t, err)
		masters[master] = true
		o := []Write{
			p.once(fmt.Sprint("once-", i), "x", window),
			p.onceOffload(fmt.Sprint("once-off-", i), fmt.Sprint("r1-", i), "body", time.Minute, window),
		}
		onceWrites = append(onceWrites, o...)
		writes = append(writes, p.xadd(fmt.Sprint("plain-", i), "x"), p.offload(fmt.Sprint("off-", i), fmt.Sprint("r2-", i), "body", 0))
		writes = append(writes, o...)
	}
	require.Greater(t, len(masters), 1, "the partitions are spread over masters")

	requireOK(t, flush(t, client, writes...))
	for i := range parts {
		p := partOf(i)
		assert.Len(t, entries(t, client, p.stream), 4, "partition %d", i)
		want, err := client.ClusterKeySlot(ctx, p.stream).Result()
		require.NoError(t, err)
		node, err := client.MasterForKey(ctx, p.stream)
		require.NoError(t, err)
		bs := buckets(t, node, p.prefix) // KEYS: on the partition's master
		require.Len(t, bs, 1, "partition %d", i)
		for _, k := range []string{p.index, keys.IdempotencyBucket(p.prefix, bs[0]),
			p.payloadKey(fmt.Sprint("r1-", i)), p.payloadKey(fmt.Sprint("r2-", i))} {
			slot, err := client.ClusterKeySlot(ctx, k).Result()
			require.NoError(t, err)
			assert.Equal(t, want, slot, k)
			assert.Equal(t, int64(1), client.Exists(ctx, k).Val(), k)
		}
		v, err := payload.Get(ctx, client, p.payloadKey(fmt.Sprint("r1-", i)))
		require.NoError(t, err)
		assert.Equal(t, "body", v)
	}

	again := flush(t, client, onceWrites...)
	requireOK(t, again)
	for i, r := range again {
		assert.True(t, r.Duplicate(), "write %d", i)
	}
	for i := range parts {
		assert.Len(t, entries(t, client, partOf(i).stream), 4, "partition %d", i)
	}
}
