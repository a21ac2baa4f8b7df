package admin_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
)

// nightReasons are the five reasons of the night shift's 882 dead letters, with how many
// letters each.
var nightReasons = []struct {
	reason string
	n      int
}{
	{"retries exhausted (3): payments: 503 Service Unavailable", 500},
	{"retries exhausted (3): card declined", 250},
	{"malformed entry: missing payload", 100},
	{"retries exhausted (3): ledger: context deadline exceeded", 30},
	{"dead-lettered: customer unknown", 2},
}

// nightDLQ writes the night's 882 dead letters to topic's 3 partitions, group "payments" but
// the malformed ones (no group), failing a second apart from base on.
func (e *opEnv) nightDLQ(topic string, base time.Time) {
	e.t.Helper()
	e.create(topic, 3)
	i := 0
	for _, r := range nightReasons {
		group := "payments"
		if r.reason == nightReasons[2].reason {
			group = ""
		}
		for range r.n {
			_, err := e.adm.AddDeadLetter(e.ctx, admin.NewDeadLetter{Topic: topic, Partition: i % 3, Reason: r.reason, Group: group,
				Payload: []byte(`{"order":` + strconv.Itoa(i) + `}`), FailedAt: base.Add(time.Duration(i) * time.Second)})
			require.NoError(e.t, err)
			i++
		}
	}
}

// TestCountDeadLetters: 882 dead letters of 5 reasons are 5 counts, largest first, with their
// oldest and newest failure; by group and partition; filtered by group, reason (ignoring
// case), partition, time and Keep; Top sums the rest in Others; ScanLimit says when it
// stopped the read.
func TestCountDeadLetters(t *testing.T) {
	t.Parallel()
	e := newOpEnv(t)
	const topic = "night"
	base := time.UnixMilli(time.Now().Add(-time.Hour).UnixMilli())
	e.nightDLQ(topic, base)

	c, err := e.adm.CountDeadLetters(e.ctx, topic, admin.DLQCountQuery{})
	require.NoError(t, err)
	assert.Equal(t, admin.CountByReason, c.By)
	assert.Equal(t, int64(882), c.Letters)
	assert.Equal(t, 882, c.Scanned)
	assert.False(t, c.Truncated)
	assert.Equal(t, 5, c.Keys)
	assert.Zero(t, c.Others)
	require.Len(t, c.Counts, 5)
	first := 0
	for i, r := range nightReasons {
		assert.Equal(t, r.reason, c.Counts[i].Key)
		assert.Equal(t, int64(r.n), c.Counts[i].Letters, r.reason)
		assert.Equal(t, base.Add(time.Duration(first)*time.Second), c.Counts[i].Oldest, r.reason)
		assert.Equal(t, base.Add(time.Duration(first+r.n-1)*time.Second), c.Counts[i].Newest, r.reason)
		first += r.n
	}

	c, err = e.adm.CountDeadLetters(e.ctx, topic, admin.DLQCountQuery{Top: 2})
	require.NoError(t, err)
	require.Len(t, c.Counts, 2)
	assert.Equal(t, 5, c.Keys)
	assert.Equal(t, int64(882-750), c.Others)

	c, err = e.adm.CountDeadLetters(e.ctx, topic, admin.DLQCountQuery{By: admin.CountByGroup})
	require.NoError(t, err)
	require.Len(t, c.Counts, 2)
	assert.Equal(t, admin.DLQCount{Key: "payments", Letters: 782, Oldest: base, Newest: base.Add(881 * time.Second)}, c.Counts[0])
	assert.Equal(t, "", c.Counts[1].Key)
	assert.Equal(t, int64(100), c.Counts[1].Letters)

	c, err = e.adm.CountDeadLetters(e.ctx, topic, admin.DLQCountQuery{By: admin.CountByPartition, Partitions: []int{2}})
	require.NoError(t, err)
	require.Len(t, c.Counts, 1)
	assert.Equal(t, "2", c.Counts[0].Key)
	assert.Equal(t, int64(294), c.Counts[0].Letters)

	c, err = e.adm.CountDeadLetters(e.ctx, topic, admin.DLQCountQuery{Group: "payments", Reason: "RETRIES EXHAUSTED"})
	require.NoError(t, err)
	assert.Equal(t, int64(780), c.Letters, "three reasons of payments")
	assert.Equal(t, 3, c.Keys)

	since := base.Add(850 * time.Second)
	c, err = e.adm.CountDeadLetters(e.ctx, topic, admin.DLQCountQuery{Since: since, Keep: func(b admin.DeadLetterBrief) bool {
		return !b.FailedAt.Before(since) && b.Partition != 0
	}})
	require.NoError(t, err)
	assert.Equal(t, int64(22), c.Letters, "the 32 letters from 850 s on (their DLQ ids are of now: all pass Since), but partition 0's")
	c, err = e.adm.CountDeadLetters(e.ctx, topic, admin.DLQCountQuery{Since: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	assert.Zero(t, c.Letters, "none dead-lettered after an hour from now")

	c, err = e.adm.CountDeadLetters(e.ctx, topic, admin.DLQCountQuery{ScanLimit: 100})
	require.NoError(t, err)
	assert.Equal(t, 100, c.Scanned)
	assert.True(t, c.Truncated)
	assert.Equal(t, int64(100), c.Letters)

	_, err = e.adm.CountDeadLetters(e.ctx, topic, admin.DLQCountQuery{By: "uuid"})
	require.ErrorIs(t, err, admin.ErrInvalidArgument)
	_, err = e.adm.CountDeadLetters(e.ctx, topic, admin.DLQCountQuery{Partitions: []int{3}})
	require.ErrorIs(t, err, admin.ErrInvalidArgument)
	_, err = e.adm.CountDeadLetters(e.ctx, "missing", admin.DLQCountQuery{})
	require.ErrorIs(t, err, admin.ErrTopicNotFound)
}
