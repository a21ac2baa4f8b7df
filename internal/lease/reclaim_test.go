package lease_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/member"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/stream"
)

// staticWindow is the presence window of the fixture's processes.
const staticWindow = 300 * time.Millisecond

// staticFixture is member "m" of group "g" on topic "t" as seen by two processes, "one" and
// "two", with a short presence window.
type staticFixture struct {
	client   *redis.Client
	space    keys.Space
	one, two *member.Instance
}

func newStaticFixture(t *testing.T) staticFixture {
	t.Helper()
	client := redistest.Start(t).Client(t)
	space := keys.New("", "")
	key := space.MemberInstances("t", "g")
	return staticFixture{client: client, space: space,
		one: member.NewInstance(client, key, "m", "one", staticWindow, time.Minute),
		two: member.NewInstance(client, key, "m", "two", staticWindow, time.Minute)}
}

// TestInstanceClaim: a name nobody holds is taken ("new"), claimed again by its holder
// ("mine"); another process finds it held (live, with the time it is presumed present) until
// the holder was silent for the window ("gone"), and a refresh of the holder moves that time
// forward (a heartbeat does not).
// TestReclaim: a static member's process takes a lease that is free, its own, or held by an
// earlier process of the member; never one of another member (not even one whose name
// starts with the member's). The earlier process is fenced out: its renewals and acks fail.
func TestReclaim(t *testing.T) {
	f := newStaticFixture(t)
	ctx := context.Background()
	key := f.space.Lease("t", 0, "g")
	old := lease.New(f.client, "m", "old", time.Minute)
	oldToken := old.NextToken()
	ok, err := old.Acquire(ctx, key, oldToken)
	require.NoError(t, err)
	require.True(t, ok)

	fresh := lease.New(f.client, "m", "new", time.Minute)
	token := fresh.NextToken()
	held, took, err := fresh.Reclaim(ctx, key, token)
	require.NoError(t, err)
	assert.True(t, held)
	assert.True(t, took, "taken over from the earlier process")
	held, took, err = fresh.Reclaim(ctx, key, token)
	require.NoError(t, err)
	assert.True(t, held)
	assert.False(t, took, "its own lease is only extended")

	ok, err = old.Renew(ctx, key, oldToken)
	require.NoError(t, err)
	assert.False(t, ok, "the earlier process cannot renew")
	err = stream.Ack(ctx, f.client, stream.AckBatch{Keys: stream.AckKeys{Lease: key, Stream: f.space.PartitionStream("t", 0),
		Commit: f.space.Commit("t", 0), PayloadIndex: f.space.PayloadIndex("t", 0)},
		Token: oldToken, Group: "g", Policy: "none", AckSetTTL: time.Minute, Frontier: "1-1", Entries: []stream.Acked{{ID: "1-1"}}})
	require.ErrorIs(t, err, fence.ErrLeaseLost, "nor ack")

	for _, other := range []string{"m#x", "mm", "n"} {
		l := lease.New(f.client, other, "n", time.Minute)
		held, _, err := l.Reclaim(ctx, key, l.NextToken())
		require.NoError(t, err)
		assert.False(t, held, "member %q took member m's lease", other)
	}
	free := f.space.Lease("t", 1, "g")
	held, took, err = fresh.Reclaim(ctx, free, fresh.NextToken())
	require.NoError(t, err)
	assert.True(t, held)
	assert.False(t, took)
	ttl, err := f.client.PTTL(ctx, free).Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, 50*time.Second, "the lease lives the Leases' TTL")
}
