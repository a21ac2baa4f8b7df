package dlq

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// TestReplaySentTwiceAppendsOnce: go-redis sends a script again when it lost the reply. An
// offloaded replay run a second time with the same payload reference appends nothing and
// answers the id of the first append.
func TestReplaySentTwiceAppendsOnce(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	space := keys.New("", "")
	dlqStream, stream := space.DLQ("t", 0), space.PartitionStream("t", 0)
	msg, err := codec.Encode("uuid-1", map[string]string{"k": "v"}, []byte(strings.Repeat("x", 100)))
	require.NoError(t, err)
	r := Record{OriginalTopic: "t", Group: "g", Headers: "{}", Message: msg}
	id, err := client.XAdd(ctx, &redis.XAddArgs{Stream: dlqStream, Values: r.Fields()}).Result()
	require.NoError(t, err)
	letter, err := client.XRange(ctx, dlqStream, id, id).Result()
	require.NoError(t, err)

	entry, err := Rebuild(letter[0].Values, id, false, Offloading{Threshold: 10, Index: space.PayloadIndex("t", 0),
		Key: func(ref string) string { return space.Payload("t", 0, ref) }})
	require.NoError(t, err)
	require.NotNil(t, entry.Stored)
	args := ReplayArgs{DLQStream: dlqStream, Stream: stream, ID: id, Entry: entry}
	first, err := Replay(ctx, client, args)
	require.NoError(t, err)
	again, err := Replay(ctx, client, args)
	require.NoError(t, err)
	assert.Equal(t, first, again, "the second run answers the first append's id")
	assert.Equal(t, int64(1), client.XLen(ctx, stream).Val(), "appended once")
	assert.Equal(t, strings.Repeat("x", 100), client.Get(ctx, entry.Stored.Key).Val())
	assert.Equal(t, []string{first + "|" + entry.Stored.Ref}, client.ZRange(ctx, entry.Stored.Index, 0, -1).Val())
	got := client.XRange(ctx, stream, first, first).Val()
	require.Len(t, got, 1)
	assert.Equal(t, entry.Stored.Ref, payload.Ref(got[0].Values))
}

// onceFixture writes one inline dead letter and returns its replay args.
func onceFixture(t *testing.T, client redis.UniversalClient) ReplayArgs {
	t.Helper()
	ctx := context.Background()
	space := keys.New("", "")
	dlqStream, stream := space.DLQ("t", 0), space.PartitionStream("t", 0)
	msg, err := codec.Encode("uuid-1", map[string]string{"k": "v"}, []byte("body"))
	require.NoError(t, err)
	r := Record{OriginalTopic: "t", Group: "g", Headers: "{}", Message: msg}
	id, err := client.XAdd(ctx, &redis.XAddArgs{Stream: dlqStream, Values: r.Fields()}).Result()
	require.NoError(t, err)
	letter, err := client.XRange(ctx, dlqStream, id, id).Result()
	require.NoError(t, err)
	entry, err := Rebuild(letter[0].Values, id, false, Offloading{})
	require.NoError(t, err)
	return ReplayArgs{DLQStream: dlqStream, Stream: stream, ID: id, Entry: entry}
}

// TestReplayOnce: a replay with Once of a letter replayed before writes nothing and answers a
// *ReplayedError with the earlier replay's mark; without Once it replays again.
func TestReplayOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		replayed   bool // replayed once before
		once       bool
		wantErr    bool
		wantLength int64
	}{
		{"first replay with once", false, true, false, 1},
		{"replayed before, once", true, true, true, 1},
		{"replayed before, again", true, false, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client := redistest.Start(t).Client(t)
			ctx := context.Background()
			args := onceFixture(t, client)
			first := ""
			if tt.replayed {
				var err error
				first, err = Replay(ctx, client, args)
				require.NoError(t, err)
			}
			args.Once = tt.once
			id, err := Replay(ctx, client, args)
			assert.Equal(t, tt.wantLength, client.XLen(ctx, args.Stream).Val())
			if !tt.wantErr {
				require.NoError(t, err)
				assert.NotEmpty(t, id)
				return
			}
			require.ErrorIs(t, err, ErrReplayed)
			var re *ReplayedError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, args.ID, re.ID)
			assert.Equal(t, first, re.Mark.As)
			assert.False(t, re.Mark.At.IsZero())
			assert.Empty(t, id)
			marks, err := Marks(ctx, client, args.DLQStream, []string{args.ID})
			require.NoError(t, err)
			assert.Equal(t, first, marks[args.ID].As, "the mark is the first replay's")
		})
	}
}

// TestReplayOnceRacing: replays with Once of one letter sent at once append one entry; every
// other one answers ErrReplayed.
func TestReplayOnceRacing(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	args := onceFixture(t, client)
	args.Once = true
	const n = 8
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := Replay(ctx, client, args)
			errs <- err
		}()
	}
	replayed := 0
	for range n {
		err := <-errs
		if err == nil {
			replayed++
			continue
		}
		assert.ErrorIs(t, err, ErrReplayed)
	}
	assert.Equal(t, 1, replayed)
	assert.Equal(t, int64(1), client.XLen(ctx, args.Stream).Val())
}
