package streamq_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// TestClusterPartitionsSpreadOverMasters: the 64 partitions of a topic hash to slots of all
// 3 masters, every key of a partition shares its stream's slot, each stream lives on the
// master the slot map names, and a 3-member group leases partitions on every master.
func TestClusterPartitionsSpreadOverMasters(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3, 0)
	client := c.Client(t)
	ctx := context.Background()
	space := keys.New("", "")
	const topic, group, partitions = "spread", "g", 64

	perMaster := map[string]int{}
	masters := streamqtest.PartitionMasters(t, c, client, topic, partitions)
	for p, m := range masters {
		perMaster[m]++
		slot := streamqtest.SlotOf(t, client, space.PartitionStream(topic, p))
		for _, k := range []string{
			space.DLQ(topic, p), space.Lease(topic, p, group), space.Retry(topic, p, group),
			space.RetryItems(topic, p, group), space.Delay(topic, p), space.DelayItems(topic, p),
			space.Commit(topic, p), space.Acks(topic, p, "1-1"), space.Payload(topic, p, "ref"),
			space.PayloadIndex(topic, p), space.DLQLease(topic, p, group),
		} {
			assert.Equal(t, slot, streamqtest.SlotOf(t, client, k), "%s is not in the slot of partition %d", k, p)
		}
	}
	t.Logf("partitions per master: %v", perMaster)
	require.Len(t, perMaster, 3, "the partitions must use every master")
	for m, n := range perMaster {
		assert.GreaterOrEqual(t, n, partitions/6, "master %s serves only %d of %d partitions", m, n, partitions)
	}

	// Three members, each with a client of its own (as three processes would have). The first
	// member holds all 64 partitions until the others join: one blocking read per partition,
	// about 21 per master, so the pool is sized above that (see docs/cluster.md, Connections).
	rec := streamqtest.NewRecorder()
	for _, name := range []string{"a", "b", "c"} {
		client := c.ClientWith(t, func(o *redis.ClusterOptions) { o.PoolSize = partitions + 10 })
		_, ch := streamqtest.SubscribeMember(t, client, topic, group, name, partitions, nil)
		streamqtest.ConsumeInto(ch, rec)
	}
	owners := streamqtest.WaitOwners(t, client, topic, group, partitions, func(n map[string]int) bool {
		return n[""] == 0 && n["a"] >= 21 && n["b"] >= 21 && n["c"] >= 21
	})
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions})
	var msgs []*message.Message
	for p := 0; p < partitions; p++ {
		m := message.NewMessage(watermill.NewUUID(), []byte("p"+strconv.Itoa(p)))
		m.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(p))
		msgs = append(msgs, m)
	}
	require.NoError(t, pub.Publish(topic, msgs...))
	rec.WaitUnique(t, partitions, 20*time.Second)

	// Each stream is stored on the master the slot map names (a node answers only for its
	// own slots).
	for p, m := range masters {
		n, err := c.Node(m).Client(t).XLen(ctx, space.PartitionStream(topic, p)).Result()
		require.NoError(t, err, "partition %d on %s", p, m)
		assert.Equal(t, int64(1), n, "partition %d on %s", p, m)
	}
	leased := map[string]map[string]int{} // member -> master -> partitions
	for p, o := range owners {
		if leased[o] == nil {
			leased[o] = map[string]int{}
		}
		leased[o][masters[p]]++
	}
	consumed := map[string]map[string]bool{} // member -> masters it consumed from
	for _, r := range rec.Snapshot() {
		if consumed[r.Member] == nil {
			consumed[r.Member] = map[string]bool{}
		}
		consumed[r.Member][masters[r.Partition]] = true
	}
	for _, member := range []string{"a", "b", "c"} {
		t.Logf("member %s leases partitions on masters %v", member, leased[member])
		assert.Len(t, leased[member], 3, "member %s leases partitions of only %d masters", member, len(leased[member]))
		assert.Len(t, consumed[member], 3, "member %s consumed from only %d masters", member, len(consumed[member]))
	}
}
