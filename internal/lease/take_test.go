package lease

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// takenParts records the partitions a rebalancer starts.
type takenParts struct{ taken []int }

func (o *takenParts) Has(int) bool                      { return false }
func (o *takenParts) Take(p int, _ string, _ time.Time) { o.taken = append(o.taken, p) }
func (o *takenParts) HandOver([]int)                    {}
func (o *takenParts) Count() int                        { return len(o.taken) }
func (o *takenParts) HighestAcked(int) string           { return "" }

// TestNothingIsTakenWhileAHealIsDue: a partition found free while a heal is due (a worker
// lost its lease mid-round because an operator deleted the topic by force) is not leased
// again before the heal has checked what still exists; once nothing is due it is.
func TestNothingIsTakenWhileAHealIsDue(t *testing.T) {
	client := redistest.Start(t).Client(t)
	view, err := keys.New("", "").NewView("t")
	require.NoError(t, err)
	owned := &takenParts{}
	r := NewRebalancer(context.Background(), RebalancerDeps{Client: client, Leases: New(client, "m", "n", time.Minute),
		View: view, Group: "g", Member: "m", Owned: owned, Clock: clock.Real()})
	defer r.Cancel()
	ctx := context.Background()
	lease := view.Lease(0, "g")

	r.RequestHeal()
	require.NoError(t, r.take(ctx, []int{0}, []string{""}))
	assert.Empty(t, owned.taken, "a partition was started while a heal was due")
	assert.Zero(t, client.Exists(ctx, lease).Val(), "a lease was created while a heal was due")

	r.healDue.Store(false)
	require.NoError(t, r.take(ctx, []int{0}, []string{""}))
	assert.Equal(t, []int{0}, owned.taken)
	assert.EqualValues(t, 1, client.Exists(ctx, lease).Val())
}
