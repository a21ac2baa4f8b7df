package member_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/member"
	"github.com/streamq-dev/streamq/internal/redistest"
)

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

func (f staticFixture) membership(inst *member.Instance) *member.Membership {
	return member.NewMembership(f.client, f.space.Members("t", "g"), f.space.MemberCaps("t", "g"),
		member.Member{Name: "m"}, time.Minute).Static(inst)
}

func claim(t *testing.T, inst *member.Instance) member.Claim {
	t.Helper()
	c, err := inst.Claim(context.Background())
	require.NoError(t, err)
	return c
}

// TestInstanceClaim: a name nobody holds is taken ("new"), claimed again by its holder
// ("mine"); another process finds it held (live, with the time it is presumed present) until
// the holder was silent for the window ("gone"), and a refresh of the holder moves that time
// forward (a heartbeat does not).
func TestInstanceClaim(t *testing.T) {
	f := newStaticFixture(t)
	ctx := context.Background()
	assert.Equal(t, member.Claim{Taken: true, How: "new"}, claim(t, f.one))
	assert.Equal(t, member.Claim{Taken: true, How: "mine"}, claim(t, f.one))

	held := claim(t, f.two)
	assert.False(t, held.Taken)
	assert.Equal(t, "one", held.Holder)
	assert.Equal(t, "live", held.State)
	assert.Positive(t, held.Left)
	assert.LessOrEqual(t, held.Left, staticWindow)

	time.Sleep(50 * time.Millisecond) // let the server clock move on
	_, err := f.membership(f.one).Heartbeat(ctx)
	require.NoError(t, err)
	assert.Equal(t, held.Until, claim(t, f.two).Until, "a heartbeat leaves the presence to the refreshes")
	renewed, err := f.one.Refresh(ctx)
	require.NoError(t, err)
	assert.True(t, renewed)
	again := claim(t, f.two)
	assert.False(t, again.Taken)
	assert.Greater(t, again.Until, held.Until, "a refresh moves the holder's presence forward")
	assert.Greater(t, again.Left, staticWindow-50*time.Millisecond, "to one window from the refresh")

	require.Eventually(t, func() bool { return claim(t, f.two).Taken }, 5*time.Second, 20*time.Millisecond)
	assert.Equal(t, member.Claim{Taken: true, How: "mine"}, claim(t, f.two))
	assert.False(t, claim(t, f.one).Taken, "the silent process lost the name")
}

// TestStaticHeartbeatSuperseded: once another process holds the name, the old holder's
// heartbeat and its presence refresh fail with ErrSuperseded and write nothing (the
// membership entry and the record stay the successor's); its Leave and Closing touch nothing
// either.
func TestStaticHeartbeatSuperseded(t *testing.T) {
	f := newStaticFixture(t)
	ctx := context.Background()
	claim(t, f.one)
	require.Eventually(t, func() bool { return claim(t, f.two).Taken }, 5*time.Second, 20*time.Millisecond)
	_, err := f.membership(f.two).Heartbeat(ctx)
	require.NoError(t, err)
	before := f.snapshot(t)

	_, err = f.membership(f.one).Heartbeat(ctx)
	require.ErrorIs(t, err, member.ErrSuperseded)
	renewed, err := f.one.Refresh(ctx)
	require.ErrorIs(t, err, member.ErrSuperseded)
	assert.False(t, renewed)
	require.NoError(t, f.membership(f.one).Leave(ctx))
	mine, err := f.one.Closing(ctx, time.Minute)
	require.NoError(t, err)
	assert.False(t, mine)
	assert.Equal(t, before, f.snapshot(t), "the superseded process wrote nothing")

	require.NoError(t, f.membership(f.two).Leave(ctx))
	live, err := member.Live(ctx, f.client, []string{f.space.Members("t", "g")})
	require.NoError(t, err)
	assert.Equal(t, [][]string{nil}, live, "the holder's Leave removes the member")
	assert.Equal(t, member.Claim{Taken: true, How: "new"}, claim(t, f.one), "and its record: the name is free at once")
}

// snapshot is the membership zset and the instances hash.
func (f staticFixture) snapshot(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	members, err := f.client.ZRange(ctx, f.space.Members("t", "g"), 0, -1).Result()
	require.NoError(t, err)
	records, err := f.client.HGetAll(ctx, f.space.MemberInstances("t", "g")).Result()
	require.NoError(t, err)
	return append(members, records["m"])
}

// TestInstanceClosing: a holder that starts a graceful Close is waited for ("closing") past
// its presence window, for as long as it said (a refresh of its own renews nothing and
// leaves the record so), and its Leave frees the name at once.
func TestInstanceClosing(t *testing.T) {
	f := newStaticFixture(t)
	ctx := context.Background()
	claim(t, f.one)
	mine, err := f.one.Closing(ctx, time.Minute)
	require.NoError(t, err)
	require.True(t, mine)
	c := claim(t, f.two)
	assert.False(t, c.Taken)
	assert.Equal(t, "closing", c.State)
	assert.Greater(t, c.Left, 50*time.Second)
	renewed, err := f.one.Refresh(ctx)
	require.NoError(t, err)
	assert.False(t, renewed, "a Close under way is not undone")
	c = claim(t, f.two)
	assert.Equal(t, "closing", c.State)
	assert.Greater(t, c.Left, 50*time.Second)

	require.NoError(t, f.membership(f.one).Leave(ctx))
	assert.Equal(t, member.Claim{Taken: true, How: "new"}, claim(t, f.two))
}
