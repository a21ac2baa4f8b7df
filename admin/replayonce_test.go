package admin_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
)

// addLetter writes one dead letter to partition 1 of topic (registered with 2 partitions).
func (e *env) addLetter(topic string) admin.DeadLetter {
	e.t.Helper()
	ctx := context.Background()
	require.NoError(e.t, e.adm.CreateTopic(ctx, topic, 2))
	d, err := e.adm.AddDeadLetter(ctx, admin.NewDeadLetter{Topic: topic, Partition: 1, Payload: []byte("p"), Reason: "bad", Group: workers})
	require.NoError(e.t, err)
	return d
}

// TestReplayDeadLetterOnce: a second replay of a kept letter replays nothing and says when
// and as which entry it was replayed; Again replays it again; Delete does not get past the
// check either.
func TestReplayDeadLetterOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	const topic = "refunds"
	d := e.addLetter(topic)
	first, err := e.adm.ReplayDeadLetter(ctx, topic, 1, d.ID, admin.ReplayOptions{})
	require.NoError(t, err)
	marked, err := e.adm.DLQEntry(ctx, topic, 1, d.ID)
	require.NoError(t, err)

	for _, opts := range []admin.ReplayOptions{{}, {Delete: true}, {AllGroups: true}} {
		id, err := e.adm.ReplayDeadLetter(ctx, topic, 1, d.ID, opts)
		require.ErrorIs(t, err, admin.ErrAlreadyReplayed, "%+v", opts)
		var already *admin.AlreadyReplayedError
		require.ErrorAs(t, err, &already)
		assert.Equal(t, admin.AlreadyReplayedError{Topic: topic, Partition: 1, ID: d.ID,
			ReplayedAt: marked.ReplayedAt, ReplayedAs: first}, *already)
		assert.Empty(t, id)
	}
	assert.Len(t, e.streamEntries(topic, 1), 1, "nothing appended after the first replay")
	assert.Equal(t, int64(1), e.size(topic), "the letter stays")

	again, err := e.adm.ReplayDeadLetter(ctx, topic, 1, d.ID, admin.ReplayOptions{Again: true})
	require.NoError(t, err)
	assert.NotEqual(t, first, again)
	assert.Len(t, e.streamEntries(topic, 1), 2)
	marked, err = e.adm.DLQEntry(ctx, topic, 1, d.ID)
	require.NoError(t, err)
	assert.Equal(t, again, marked.ReplayedAs, "the mark is the latest replay's")
}

// TestReplayDeadLetterOnceRacing: replays of one letter at once, without Again, append one
// entry; the others are ErrAlreadyReplayed, and a ReplayAll racing them skips it.
func TestReplayDeadLetterOnceRacing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	const topic = "refunds"
	d := e.addLetter(topic)
	const n = 8
	replays := make(chan int, n+1) // how many each call replayed
	for range n {
		go func() {
			_, err := e.adm.ReplayDeadLetter(ctx, topic, 1, d.ID, admin.ReplayOptions{})
			if err != nil && !errors.Is(err, admin.ErrAlreadyReplayed) {
				t.Errorf("replay: %v", err)
			}
			replays <- map[bool]int{true: 1}[err == nil]
		}()
	}
	go func() {
		c, err := e.adm.ReplayAll(ctx, topic, 0, nil, admin.ReplayOptions{})
		assert.NoError(t, err)
		replays <- c
	}()
	total := 0
	for range n + 1 {
		total += <-replays
	}
	assert.Equal(t, 1, total)
	assert.Len(t, e.streamEntries(topic, 1), 1, "appended once")
}
