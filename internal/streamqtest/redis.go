package streamqtest

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// XLen is the length of stream.
func XLen(t testing.TB, client redis.UniversalClient, stream string) int64 {
	t.Helper()
	n, err := client.XLen(context.Background(), stream).Result()
	require.NoError(t, err)
	return n
}

// Entries are the entries of the first n partitions of topic (default keyspace), partition
// after partition, each in stream order.
func Entries(t testing.TB, client redis.UniversalClient, topic string, n int) []redis.XMessage {
	t.Helper()
	space := keys.New("", "")
	var out []redis.XMessage
	for p := range n {
		entries, err := client.XRange(context.Background(), space.PartitionStream(topic, p), "-", "+").Result()
		require.NoError(t, err)
		out = append(out, entries...)
	}
	return out
}

// GroupPending is the number of pending entries of group on stream.
func GroupPending(t testing.TB, client redis.UniversalClient, stream, group string) int64 {
	t.Helper()
	p, err := client.XPending(context.Background(), stream, group).Result()
	require.NoError(t, err)
	return p.Count
}

// GroupAcked is the number of entries of stream that group has read and acked: those up to
// the group's last-delivered id that are no longer pending. Entries nobody has read yet are
// neither pending nor acked, so this is what "nothing was acked" is measured by.
func GroupAcked(t testing.TB, client redis.UniversalClient, stream, group string) int64 {
	t.Helper()
	ctx := context.Background()
	groups, err := client.XInfoGroups(ctx, stream).Result()
	require.NoError(t, err)
	for _, g := range groups {
		if g.Name != group {
			continue
		}
		read, err := client.XRange(ctx, stream, "-", g.LastDeliveredID).Result()
		require.NoError(t, err)
		return int64(len(read)) - g.Pending
	}
	require.Failf(t, "no such group", "group %s of %s", group, stream)
	return 0
}

// SlotOf returns the hash slot of key (CLUSTER KEYSLOT).
func SlotOf(t testing.TB, client *redis.ClusterClient, key string) int {
	t.Helper()
	slot, err := client.ClusterKeySlot(context.Background(), key).Result()
	require.NoError(t, err)
	return int(slot)
}

// PartitionMasters returns the master serving each partition of topic, by the slot map.
func PartitionMasters(t testing.TB, c *redistest.Cluster, client *redis.ClusterClient, topic string, n int) []string {
	t.Helper()
	space := keys.New("", "")
	out := make([]string, n)
	for p := range out {
		m, err := c.MasterOf(SlotOf(t, client, space.PartitionStream(topic, p)))
		require.NoError(t, err)
		out[p] = m
	}
	return out
}

// Describe renders a short list for failure messages.
func Describe(ids []string, limit int) string {
	if len(ids) <= limit {
		return fmt.Sprint(ids)
	}
	return fmt.Sprintf("%v ... (%d in all)", ids[:limit], len(ids))
}

// SortedInts returns the members of set, sorted.
func SortedInts(set map[int]bool) []int {
	out := make([]int, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
