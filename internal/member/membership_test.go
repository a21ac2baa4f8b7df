package member_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/member"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// TestHeartbeatRecordsProcessAndBeat: a heartbeat records the member's host and PID beside
// its capabilities, and the group's latest beat in the topic's beats hash, which outlives
// the membership; a leave replaces that beat with the leave. The other members still read
// the capabilities they need.
func TestHeartbeatRecordsProcessAndBeat(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	space := keys.New("", "")
	members, caps := space.Members("t", "g"), space.MemberCaps("t", "g")
	m := member.NewMembership(client, members, caps, member.Member{Name: "alpha", Modulo: 2, Remainder: 1, MaxLeased: 3}, time.Minute)
	before, err := client.Time(ctx).Result()
	require.NoError(t, err)
	live, err := m.Heartbeat(ctx)
	require.NoError(t, err)
	assert.Equal(t, []member.Member{{Name: "alpha", Modulo: 2, Remainder: 1, MaxLeased: 3}}, live, "the capabilities read back")

	host, _ := os.Hostname()
	raw, err := client.HGet(ctx, caps, "alpha").Result()
	require.NoError(t, err)
	c := member.ParseCaps("alpha", raw)
	assert.Equal(t, host, c.Host)
	assert.Equal(t, os.Getpid(), c.PID)
	assert.WithinDuration(t, before, c.At, time.Second)

	key, field := member.BeatsKey(members)
	assert.Equal(t, "streaming:mq:members:{t}", key)
	assert.Equal(t, "g", field)
	b := readBeat(t, client.HGet(ctx, key, field).Val())
	assert.Equal(t, member.Beat{Member: "alpha", Host: host, PID: os.Getpid(), At: c.At}, b)
	assert.Equal(t, host+" pid "+strconv.Itoa(os.Getpid()), b.Process())
	ttl, err := client.PTTL(ctx, key).Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, member.BeatTTL-time.Minute, "the beat outlives the membership")

	require.NoError(t, m.Leave(ctx))
	left := readBeat(t, client.HGet(ctx, key, field).Val())
	assert.True(t, left.Left)
	assert.Equal(t, "alpha", left.Member)
	assert.False(t, left.At.Before(b.At))
}

// TestBeatOfACrashedMember: a member that stops heartbeating without leaving (a crash)
// leaves its last heartbeat as the group's beat, however long ago, and another group's beat
// is a field of its own.
func TestBeatOfACrashedMember(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	space := keys.New("", "")
	one := member.NewMembership(client, space.Members("t", "g"), space.MemberCaps("t", "g"), member.Member{Name: "one"}, 100*time.Millisecond)
	other := member.NewMembership(client, space.Members("t", "h"), space.MemberCaps("t", "h"), member.Member{Name: "two"}, time.Minute)
	_, err := one.Heartbeat(ctx)
	require.NoError(t, err)
	last, err := client.Time(ctx).Result()
	require.NoError(t, err)
	_, err = other.Heartbeat(ctx)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		got, err := member.Live(ctx, client, []string{space.Members("t", "g")})
		return err == nil && len(got[0]) == 0
	}, 5*time.Second, 20*time.Millisecond, "the heartbeat never expired")
	key, _ := member.BeatsKey(space.Members("t", "g"))
	all, err := client.HGetAll(ctx, key).Result()
	require.NoError(t, err)
	require.Len(t, all, 2)
	b := readBeat(t, all["g"])
	assert.Equal(t, "one", b.Member)
	assert.False(t, b.Left)
	assert.WithinDuration(t, last, b.At, 50*time.Millisecond, "the beat is the last heartbeat")
	assert.Equal(t, "two", readBeat(t, all["h"]).Member)
}

func readBeat(t *testing.T, v string) member.Beat {
	t.Helper()
	b, ok := member.ParseBeat(v)
	require.True(t, ok, "no beat in %q", v)
	return b
}

// TestParseBeat reads what EncodeBeat writes, member names with commas included, and
// refuses what is no beat.
func TestParseBeat(t *testing.T) {
	at := time.UnixMilli(1_700_000_000_123)
	tests := []struct {
		name string
		in   string
		want member.Beat
		ok   bool
	}{
		{"round trip", member.EncodeBeat(member.Beat{Member: "w,1", Host: "h", PID: 7, At: at}), member.Beat{Member: "w,1", Host: "h", PID: 7, At: at}, true},
		{"left", member.EncodeBeat(member.Beat{Member: "w", At: at, Left: true}), member.Beat{Member: "w", At: at, Left: true}, true},
		{"commas dropped from the host", member.EncodeBeat(member.Beat{Member: "w", Host: "a,b", At: at}), member.Beat{Member: "w", Host: "ab", At: at}, true},
		{"empty", "", member.Beat{}, false},
		{"no kind", "1,2,h,x,w", member.Beat{}, false},
		{"no member", "1,2,h,beat,", member.Beat{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := member.ParseBeat(tt.in)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestParseCaps: the process and heartbeat time of new capabilities, none of old ones.
func TestParseCaps(t *testing.T) {
	assert.Equal(t, member.Beat{Member: "m", PID: 12, Host: "web-1", At: time.UnixMilli(5)}, member.ParseCaps("m", "0,0,0,12,web-1,5"))
	assert.Equal(t, member.Beat{Member: "m"}, member.ParseCaps("m", "0,0,-1"))
	assert.Equal(t, member.Member{Name: "m", MaxLeased: member.NoLeases}, member.ParseMember("m", "0,0,-1,12,web-1,5"))
}

// TestLeaveAfterADeleteWritesNothing: a member that leaves after its membership was deleted
// (a forced delete of its group or topic) writes no beat back.
func TestLeaveAfterADeleteWritesNothing(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	space := keys.New("", "")
	m := member.NewMembership(client, space.Members("t", "g"), space.MemberCaps("t", "g"), member.Member{Name: "alpha"}, time.Minute)
	_, err := m.Heartbeat(ctx)
	require.NoError(t, err)
	key, _ := member.BeatsKey(space.Members("t", "g"))
	require.NoError(t, client.Del(ctx, space.Members("t", "g"), space.MemberCaps("t", "g"), key).Err())
	require.NoError(t, m.Leave(ctx))
	n, err := client.Exists(ctx, key).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the beats hash stays deleted")
}

// TestBeatsKeyIsTheTopicsBeatsHash: the hash a heartbeat records its beat in is the one that
// readers name by topic (keys.Space.Beats), whatever the group and the prefix.
func TestBeatsKeyIsTheTopicsBeatsHash(t *testing.T) {
	for _, space := range []keys.Space{keys.New("", ""), keys.New("s", "c")} {
		for _, g := range []string{"g", "a:b", "{x}"} {
			key, field := member.BeatsKey(space.Members("t", g))
			assert.Equal(t, space.Beats("t"), key, "group %q", g)
			assert.Equal(t, g, field)
		}
	}
}
