package lease

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/member"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// TestPresenceWindow: three quarters of RebalanceInterval, at least three BlockTimes and
// minPresenceWindow, at most LeaseTTL.
func TestPresenceWindow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                  string
		rebalance, block, ttl time.Duration
		want                  time.Duration
	}{
		{name: "defaults", rebalance: 2 * time.Second, block: 100 * time.Millisecond, ttl: 10 * time.Second, want: 1500 * time.Millisecond},
		{name: "a long rebalance interval", rebalance: 8 * time.Second, block: 100 * time.Millisecond, ttl: 30 * time.Second, want: 6 * time.Second},
		{name: "a long block", rebalance: 2 * time.Second, block: 800 * time.Millisecond, ttl: 10 * time.Second, want: 2400 * time.Millisecond},
		{name: "a short rebalance interval", rebalance: 150 * time.Millisecond, block: 50 * time.Millisecond, ttl: 2 * time.Second, want: minPresenceWindow},
		{name: "never past LeaseTTL", rebalance: 2 * time.Second, block: time.Second, ttl: 2500 * time.Millisecond, want: 2500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, PresenceWindow(Config{RebalanceInterval: tt.rebalance, LeaseTTL: tt.ttl}, tt.block))
		})
	}
}

// keeperFixture is a presence keeper on a fake clock for process "one" of member "m", which
// claimed the name, with a window of a minute (the record's until is a minute past the
// server's clock at each refresh).
type keeperFixture struct {
	client  *redis.Client
	key     string
	fake    *clock.Fake
	term    *Term
	keeper  *presenceKeeper
	crashed chan struct{}
}

const keeperWindow = time.Minute

func newKeeperFixture(t *testing.T, rdb *redis.Client) keeperFixture {
	t.Helper()
	client := redistest.Start(t).Client(t)
	if rdb == nil {
		rdb = client
	}
	f := keeperFixture{client: client, key: keys.New("", "").MemberInstances("t", "g"),
		fake: clock.NewFake(time.Unix(1_700_000_000, 0)), crashed: make(chan struct{})}
	claimed, err := member.NewInstance(client, f.key, "m", "one", keeperWindow, time.Hour).Claim(context.Background())
	require.NoError(t, err)
	require.True(t, claimed.Taken)
	f.term = NewTerm(f.fake, keeperWindow, f.fake.Now())
	f.keeper = newPresenceKeeper(context.Background(), presenceDeps{
		rdb: rdb, inst: member.NewInstance(rdb, f.key, "m", "one", keeperWindow, time.Hour), term: f.term,
		period: keeperWindow / 3, clock: f.fake, log: watermill.NopLogger{}, superseded: func() { close(f.crashed) },
	})
	f.keeper.start()
	t.Cleanup(f.keeper.stop)
	return f
}

// record is the name's record in the instances hash.
func (f keeperFixture) record(t *testing.T) string {
	t.Helper()
	r, err := f.client.HGet(context.Background(), f.key, "m").Result()
	require.NoError(t, err)
	return r
}

// waitTimer waits until the keeper waits for its next refresh.
func (f keeperFixture) waitTimer(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool { return f.fake.Timers() == 1 }, 5*time.Second, time.Millisecond)
}

// TestPresenceKeeper: the keeper refreshes the record a period after it started, not
// sooner, and renews the presence term from the refresh's send time; once another process
// holds the name, its refresh writes nothing, stops the subscription as a crash would, and
// the keeper refreshes no more.
func TestPresenceKeeper(t *testing.T) {
	t.Parallel()
	f := newKeeperFixture(t, nil)
	claimed := f.record(t)
	period := keeperWindow / 3

	f.waitTimer(t)
	f.fake.Advance(period - time.Millisecond)
	assert.Equal(t, 1, f.fake.Timers(), "no refresh before the period")
	assert.True(t, f.term.ExpiresWithin(keeperWindow-period+time.Millisecond), "the term is the claim's")
	<-time.After(5 * time.Millisecond) // the server's clock moves on
	f.fake.Advance(time.Millisecond)
	require.Eventually(t, func() bool { return f.record(t) != claimed }, 5*time.Second, time.Millisecond, "refreshed")
	f.waitTimer(t)
	assert.True(t, strings.HasPrefix(f.record(t), "one|"))
	assert.False(t, f.term.ExpiresWithin(keeperWindow-time.Millisecond), "the term runs a window from the refresh")

	other := "two|" + claimed[len("one|"):]
	require.NoError(t, f.client.HSet(context.Background(), f.key, "m", other).Err())
	f.fake.Advance(period)
	select {
	case <-f.crashed:
	case <-time.After(5 * time.Second):
		t.Fatal("a superseded keeper did not stop the subscription")
	}
	f.keeper.stop()
	assert.Zero(t, f.fake.Timers(), "no more refreshes")
	assert.Equal(t, other, f.record(t), "the successor's record is untouched")
}

// TestPresenceKeeperRedisFails: a refresh Redis does not answer renews nothing (the term
// runs out) and stops nothing: the keeper goes on refreshing.
func TestPresenceKeeperRedisFails(t *testing.T) {
	t.Parallel()
	dead := redis.NewClient(&redis.Options{Addr: "localhost:1"})
	require.NoError(t, dead.Close())
	f := newKeeperFixture(t, dead)
	for range 3 {
		f.waitTimer(t)
		f.fake.Advance(keeperWindow / 3)
	}
	f.waitTimer(t)
	assert.True(t, f.term.Expired(), "no refresh renewed the term")
	select {
	case <-f.crashed:
		t.Fatal("a failed refresh stopped the subscription")
	default:
	}
}
