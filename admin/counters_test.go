package admin_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
)

// TestTopicCounters publishes 10 messages over 2 partitions, delivers 3 of partition 0 to
// group "g" (group "idle" reads nothing), then trims: entries-added and entries-read stay,
// length and lag follow the stream.
func TestTopicCounters(t *testing.T) {
	e := newOpEnv(t)
	const topic = "counted"
	e.create(topic, 3) // partition 2 is never written
	e.publishRoundRobin(topic, 10, 2)
	for p := range 2 {
		e.createGroup(topic, p, "g", "0-0")
		e.createGroup(topic, p, "idle", "0-0")
	}
	require.Len(t, e.readGroup(topic, 0, "g", "c", 3), 3)

	c, err := e.adm.TopicCounters(e.ctx, topic)
	require.NoError(t, err)
	assert.Equal(t, topic, c.Topic)
	assert.Equal(t, 3, c.Partitions)
	assert.False(t, c.Time.IsZero())
	assert.Equal(t, int64(10), c.EntriesAdded)
	assert.Equal(t, int64(10), c.Length)
	assert.Equal(t, int64(10), c.Published)
	assert.Zero(t, c.Retries)
	assert.Zero(t, c.RetriesAdded)
	for name, g := range c.Groups {
		assert.Positive(t, g.TimeLag, "group %s: the age of its oldest undelivered entry", name)
		g.TimeLag = 0
		c.Groups[name] = g
	}
	assert.Equal(t, map[string]admin.GroupCounters{
		"g":    {EntriesRead: 3, Lag: 7, Pending: 3},
		"idle": {EntriesRead: 0, Lag: 10, Pending: 0},
	}, c.Groups)

	require.NoError(t, e.client.XTrimMaxLen(e.ctx, e.space.PartitionStream(topic, 1), 0).Err())
	later, err := e.adm.TopicCounters(e.ctx, topic)
	require.NoError(t, err)
	assert.Equal(t, int64(10), later.EntriesAdded, "trimming does not lower entries-added")
	assert.Equal(t, int64(5), later.Length)
	assert.Equal(t, int64(3), later.Groups["g"].EntriesRead)
	assert.Equal(t, int64(2), later.Groups["g"].Lag)
	assert.False(t, later.Time.Before(c.Time))
}

func TestTopicCountersUnknownTopic(t *testing.T) {
	e := newOpEnv(t)
	_, err := e.adm.TopicCounters(e.ctx, "nope")
	require.ErrorIs(t, err, admin.ErrTopicNotFound)
	_, err = e.adm.TopicCounters(e.ctx, "bad{name}")
	require.ErrorIs(t, err, admin.ErrInvalidArgument)
}
