package admin_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/member"
)

// TestDeleteGroup removes one group and its keys and leaves another group alone.
func TestDeleteGroup(t *testing.T) {
	e := newOpEnv(t)
	const topic = "dg"
	e.create(topic, 2)
	e.publishRoundRobin(topic, 6, 2)
	c := e.client
	var groupKeys []string
	for p := range 2 {
		e.createGroup(topic, p, "gone", "0-0")
		e.createGroup(topic, p, "stay", "0-0")
		require.Len(t, e.readGroup(topic, p, "gone", "c", 1), 1)
		require.NoError(t, c.Set(e.ctx, e.space.Lease(topic, p, "gone"), "m#1", 0).Err())
		require.NoError(t, c.Set(e.ctx, e.space.Lease(topic, p, "stay"), "m#2", 0).Err())
		require.NoError(t, c.ZAdd(e.ctx, e.space.Retry(topic, p, "gone"), redisZ(1, "item")).Err())
		require.NoError(t, c.HSet(e.ctx, e.space.RetryItems(topic, p, "gone"), "item", "x").Err())
		require.NoError(t, c.HSet(e.ctx, e.space.Commit(topic, p), "gone", "1-0", "stay", "2-0").Err())
		groupKeys = append(groupKeys, e.space.Lease(topic, p, "gone"), e.space.Retry(topic, p, "gone"), e.space.RetryItems(topic, p, "gone"))
	}
	// A member that crashed long ago: its heartbeat expired, so it is not live.
	require.NoError(t, c.ZAdd(e.ctx, e.space.Members(topic, "gone"), redisZ(1, "m")).Err())
	require.NoError(t, c.HSet(e.ctx, e.space.MemberCaps(topic, "gone"), "m", "0,0,0").Err())
	require.NoError(t, c.HSet(e.ctx, e.space.MemberInstances(topic, "gone"), "m", "i|1|live").Err()) // a static member's record
	groupKeys = append(groupKeys, e.space.Members(topic, "gone"), e.space.MemberCaps(topic, "gone"), e.space.MemberInstances(topic, "gone"))
	beats, field := member.BeatsKey(e.space.Members(topic, "gone"))
	require.NoError(t, c.HSet(e.ctx, beats, field, member.EncodeBeat(member.Beat{Member: "m"}), "stay", member.EncodeBeat(member.Beat{Member: "s"})).Err())

	d, err := e.adm.DeleteGroup(e.ctx, topic, "gone")
	require.NoError(t, err)
	assert.Equal(t, topic, d.Topic)
	assert.Equal(t, "gone", d.Group)
	assert.Equal(t, 2, d.Partitions)
	assert.ElementsMatch(t, groupKeys, d.Keys)
	for _, k := range groupKeys {
		assert.Zero(t, c.Exists(e.ctx, k).Val(), k)
	}
	for p := range 2 {
		assert.Equal(t, []string{"stay"}, keysOf(e.groupNames(e.space.PartitionStream(topic, p))))
		assert.Equal(t, map[string]string{"stay": "2-0"}, c.HGetAll(e.ctx, e.space.Commit(topic, p)).Val())
		assert.Equal(t, int64(1), c.Exists(e.ctx, e.space.Lease(topic, p, "stay")).Val())
	}
	assert.Equal(t, []string{"stay"}, keysOf(c.HGetAll(e.ctx, beats).Val()), "the group's last beat goes, the others' stay")
	groups, err := e.adm.ConsumerGroups(e.ctx, topic)
	require.NoError(t, err)
	require.Len(t, groups, 1)
	assert.Equal(t, "stay", groups[0].Name)

	_, err = e.adm.DeleteGroup(e.ctx, topic, "gone")
	assert.ErrorIs(t, err, admin.ErrGroupNotFound)
}
