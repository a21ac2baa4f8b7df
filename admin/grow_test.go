package admin_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
)

// TestGrowPartitions grows a 2-partition topic to 4 under a running Publisher: old entries
// stay, the groups of the old partitions (and of their DLQs) exist on the new ones at 0-0,
// and new keyed messages hash over the 4 partitions once the publisher re-read the count.
func TestGrowPartitions(t *testing.T) {
	e := newOpEnv(t)
	const topic, refresh = "grow", 100 * time.Millisecond
	e.create(topic, 2)
	pub := e.publisher(streamq.PublisherConfig{Partitioning: streamq.PartitioningConfig{RefreshInterval: refresh}})
	require.NoError(t, pub.Publish(topic, keyed("old", 20)...))
	before := [][]string{e.ids(topic, 0), e.ids(topic, 1)}
	for p := range 2 {
		e.createGroup(topic, p, "g", "$")
	}
	e.createGroup(topic, 1, "only-on-1", "$")
	require.NoError(t, e.client.XGroupCreateMkStream(e.ctx, e.space.DLQ(topic, 0), "dlq-readers", "$").Err())

	n, err := e.adm.GrowPartitions(e.ctx, topic, 4)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	for p := 2; p < 4; p++ {
		groups := e.groupNames(e.space.PartitionStream(topic, p))
		assert.ElementsMatch(t, []string{"g", "only-on-1"}, keysOf(groups), "partition %d", p)
		assert.Equal(t, "0-0", groups["g"].LastDeliveredID)
		assert.Contains(t, e.groupNames(e.space.DLQ(topic, p)), "dlq-readers")
	}
	info, err := e.adm.QueueInfo(e.ctx, topic)
	require.NoError(t, err)
	assert.Equal(t, 4, info.Partitions)

	// The publisher's partition count is re-read on its first publish after refresh passed.
	<-time.After(2 * refresh)
	msgs := keyed("new", 100)
	require.NoError(t, pub.Publish(topic, msgs...))
	for p := range 2 {
		assert.Equal(t, before[p], e.ids(topic, p)[:len(before[p])], "old entries of partition %d stay", p)
	}
	landed := map[string]int{} // uuid -> partition
	for p := range 4 {
		entries, err := e.adm.Range(e.ctx, topic, p, "", "", 1000)
		require.NoError(t, err)
		for _, x := range entries {
			landed[x.UUID] = p
		}
	}
	perPartition := map[int]int{}
	for _, m := range msgs {
		want := streamq.HashPartitioner{}.Partition(m.Metadata.Get(streamq.PartitionKeyMetadata), 4)
		assert.Equal(t, want, landed[m.UUID], "key %s", m.Metadata.Get(streamq.PartitionKeyMetadata))
		perPartition[want]++
	}
	assert.Positive(t, perPartition[2])
	assert.Positive(t, perPartition[3])

	for _, same := range []int{4, 3, 0} {
		n, err := e.adm.GrowPartitions(e.ctx, topic, same)
		assert.ErrorIs(t, err, admin.ErrInvalidArgument)
		assert.ErrorContains(t, err, "grow only: topic has 4 partitions")
		assert.Equal(t, 4, n)
	}
}

func keyed(prefix string, n int) []*message.Message {
	out := make([]*message.Message, n)
	for i := range out {
		out[i] = message.NewMessage(watermill.NewUUID(), []byte(prefix))
		out[i].Metadata.Set(streamq.PartitionKeyMetadata, prefix+"-"+strconv.Itoa(i))
	}
	return out
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
