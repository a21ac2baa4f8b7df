package admin_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/keys"
)

// TestUnknownTopicAndGroup: every operation on an unknown topic is ErrTopicNotFound, and
// every one taking a group, on a known topic without that group, is ErrGroupNotFound.
func TestUnknownTopicAndGroup(t *testing.T) {
	e := newOpEnv(t)
	ctx, a := e.ctx, e.adm
	withGroup := map[string]func(topic, group string) error{
		"GroupStats": func(tp, g string) error { _, err := a.GroupStats(ctx, tp, g); return err },
		"Pending":    func(tp, g string) error { _, err := a.Pending(ctx, tp, g, admin.PendingOptions{}); return err },
		"ResetGroupOffset": func(tp, g string) error {
			_, err := a.ResetGroupOffset(ctx, tp, g, admin.OffsetBeginning())
			return err
		},
		"DeleteGroup":    func(tp, g string) error { _, err := a.DeleteGroup(ctx, tp, g); return err },
		"CommitFrontier": func(tp, g string) error { _, err := a.CommitFrontier(ctx, tp, g); return err },
	}
	topicOnly := map[string]func(topic string) error{
		"QueueInfo":      func(tp string) error { _, err := a.QueueInfo(ctx, tp); return err },
		"ConsumerGroups": func(tp string) error { _, err := a.ConsumerGroups(ctx, tp); return err },
		"Trim":           func(tp string) error { _, err := a.Trim(ctx, tp, 10); return err },
		"TrimByAge": func(tp string) error {
			_, err := a.TrimByAge(ctx, tp, time.Hour, admin.TrimOptions{})
			return err
		},
		"GrowPartitions": func(tp string) error { _, err := a.GrowPartitions(ctx, tp, 8); return err },
		"ListRecent":     func(tp string) error { _, err := a.ListRecent(ctx, tp, 10); return err },
		"Range":          func(tp string) error { _, err := a.Range(ctx, tp, 0, "", "", 10); return err },
	}
	for name, f := range withGroup {
		t.Run(name, func(t *testing.T) {
			known := "known-" + name // the call may change the group
			e.create(known, 2)
			e.publishRoundRobin(known, 4, 2)
			e.createGroup(known, 0, "g", "0-0")
			assert.ErrorIs(t, f("unknown", "g"), admin.ErrTopicNotFound)
			assert.ErrorIs(t, f(known, "nobody"), admin.ErrGroupNotFound)
			assert.ErrorIs(t, f(known, "bad group"), admin.ErrInvalidArgument)
			assert.NoError(t, f(known, "g"), "the group exists on partition 0 only")
		})
	}
	for name, f := range topicOnly {
		t.Run(name, func(t *testing.T) {
			assert.ErrorIs(t, f("unknown"), admin.ErrTopicNotFound)
			assert.ErrorIs(t, f("bad{topic}"), admin.ErrInvalidArgument)
		})
	}
}

func TestCreateTopic(t *testing.T) {
	e := newOpEnv(t)
	require.NoError(t, e.adm.CreateTopic(e.ctx, "fresh", 3))
	err := e.adm.CreateTopic(e.ctx, "fresh", 3)
	assert.ErrorIs(t, err, admin.ErrTopicExists)
	assert.ErrorIs(t, e.adm.CreateTopic(e.ctx, "fresh", 5), admin.ErrTopicExists)

	info, err := e.adm.QueueInfo(e.ctx, "fresh")
	require.NoError(t, err)
	assert.Equal(t, 3, info.Partitions)
	assert.Zero(t, info.Length)
	assert.Empty(t, info.FirstID)
	assert.Len(t, info.PerPartition, 3)
	topics, err := e.adm.ListTopics(e.ctx)
	require.NoError(t, err)
	assert.Contains(t, topics, "fresh")
	members, err := e.client.SMembers(e.ctx, e.space.Partitions("fresh")).Result()
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{
		e.space.PartitionStream("fresh", 0), e.space.PartitionStream("fresh", 1), e.space.PartitionStream("fresh", 2),
	}, members)

	tests := []struct {
		name, topic string
		partitions  int
		nameErr     bool
	}{
		{"no partitions", "t0", 0, false},
		{"negative", "t1", -2, false},
		{"empty name", "", 1, true},
		{"brace", "a{b}", 1, true},
		{"space", "a b", 1, true},
		{"dlq name", "orders:dlq", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := e.adm.CreateTopic(e.ctx, tt.topic, tt.partitions)
			assert.ErrorIs(t, err, admin.ErrInvalidArgument)
			assert.Equal(t, tt.nameErr, errorIsName(err))
		})
	}
}

func errorIsName(err error) bool {
	return err != nil && errors.Is(err, keys.ErrInvalidName)
}
