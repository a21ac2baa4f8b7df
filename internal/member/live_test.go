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

// TestLive reads live members against the server's clock: a heartbeat expiry after TIME is
// live, one at or before it (a member that crashed) is not; missing keys and keys that are
// not zsets have none.
func TestLive(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	space := keys.New("", "")
	members, dlq, caps := space.Members("t", "g"), space.DLQMembers("t", "g"), space.MemberCaps("t", "g")
	now, err := client.Time(ctx).Result()
	require.NoError(t, err)
	future := float64(now.Add(time.Minute).UnixMilli())
	past := float64(now.Add(-time.Second).UnixMilli())

	tests := []struct {
		name string
		seed func(t *testing.T)
		keys []string
		want [][]string
	}{
		{name: "no keys", keys: nil, want: nil},
		{name: "missing key", keys: []string{members}, want: [][]string{nil}},
		{
			name: "live and expired",
			seed: func(t *testing.T) {
				zadd(t, client, members, redis.Z{Score: future, Member: "b"}, redis.Z{Score: past, Member: "crashed"},
					redis.Z{Score: future, Member: "a"})
			},
			keys: []string{members},
			want: [][]string{{"a", "b"}},
		},
		{
			name: "every member expired",
			seed: func(t *testing.T) { zadd(t, client, members, redis.Z{Score: past, Member: "crashed"}) },
			keys: []string{members},
			want: [][]string{nil},
		},
		{
			name: "several keys, one not a zset",
			seed: func(t *testing.T) {
				zadd(t, client, members, redis.Z{Score: future, Member: "m"})
				zadd(t, client, dlq, redis.Z{Score: future, Member: "d"})
				require.NoError(t, client.HSet(ctx, caps, "m", "0,0,0").Err())
			},
			keys: []string{members, caps, dlq},
			want: [][]string{{"m"}, nil, {"d"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, client.FlushDB(ctx).Err())
			if tt.seed != nil {
				tt.seed(t)
			}
			got, err := member.Live(ctx, client, tt.keys)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestLiveSeesHeartbeats: a member that heartbeats is live until it leaves.
func TestLiveSeesHeartbeats(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	space := keys.New("", "")
	m := member.NewMembership(client, space.Members("t", "g"), space.MemberCaps("t", "g"), member.Member{Name: "alpha"}, time.Minute)
	_, err := m.Heartbeat(ctx)
	require.NoError(t, err)
	got, err := member.Live(ctx, client, []string{space.Members("t", "g")})
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"alpha"}}, got)

	require.NoError(t, m.Leave(ctx))
	got, err = member.Live(ctx, client, []string{space.Members("t", "g")})
	require.NoError(t, err)
	assert.Equal(t, [][]string{nil}, got)
}

func zadd(t *testing.T, client *redis.Client, key string, zs ...redis.Z) {
	t.Helper()
	require.NoError(t, client.ZAdd(context.Background(), key, zs...).Err())
}
