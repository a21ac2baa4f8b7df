package admin_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// member runs a real Subscriber named name in group on topic (a DLQ topic name consumes the
// DLQ) until closed; it acks everything. The returned func closes it (it leaves the group).
func (e *opEnv) member(client redis.UniversalClient, topic, group, name string) func() {
	e.t.Helper()
	cfg := opSub(e, group)
	cfg.Client, cfg.Membership.ConsumerName = client, name
	cfg.Membership.LeaseTTL, cfg.Membership.RenewInterval = 2*time.Second, 300*time.Millisecond
	sub, err := streamq.NewSubscriber(cfg, watermill.NopLogger{})
	require.NoError(e.t, err)
	ctx, cancel := context.WithCancel(e.ctx)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(e.t, err)
	go func() {
		for m := range ch {
			m.Ack()
		}
	}()
	stop := func() { cancel(); _ = sub.Close() }
	e.t.Cleanup(stop)
	return stop
}

// waitLive waits until LiveMembers of topic reports want.
func (e *opEnv) waitLive(topic string, want []admin.LiveGroup) {
	e.t.Helper()
	var got []admin.LiveGroup
	require.Eventually(e.t, func() bool {
		var err error
		got, err = e.adm.LiveMembers(e.ctx, topic)
		return err == nil && assert.ObjectsAreEqual(want, got)
	}, 15*time.Second, 20*time.Millisecond, "live members of %q: want %v, last read %v", topic, want, &got)
}

// requireLiveMembersError checks that err is the typed refusal, with want's fields.
func requireLiveMembersError(t *testing.T, err error, want admin.LiveMembersError) {
	t.Helper()
	require.ErrorIs(t, err, admin.ErrLiveMembers)
	var lm *admin.LiveMembersError
	require.True(t, errors.As(err, &lm), "%v is a *LiveMembersError", err)
	assert.Equal(t, want, *lm)
	for _, m := range want.Members {
		assert.Contains(t, err.Error(), m, "the message names the members")
	}
}

// requireTombstone checks that key exists with a TTL of at most keys.TombstoneTTL.
func (e *opEnv) requireTombstone(key string) {
	e.t.Helper()
	ttl, err := e.client.PTTL(e.ctx, key).Result()
	require.NoError(e.t, err)
	assert.Positive(e.t, ttl, "tombstone %s exists and expires", key)
	assert.LessOrEqual(e.t, ttl, keys.TombstoneTTL)
}

func (e *opEnv) exists(key string) bool {
	e.t.Helper()
	n, err := e.client.Exists(e.ctx, key).Result()
	require.NoError(e.t, err)
	return n == 1
}

// TestDeleteRefusedWhileMembersLive: with a live member of group "workers" and a live
// consumer of the topic's DLQ in group "medic", DeleteGroup and DeleteTopic refuse with a
// *LiveMembersError naming them and delete nothing; forced, they delete and leave a
// tombstone with a TTL. The DLQ consumer does not hold back DeleteGroup of "medic"'s
// namesake: DeleteGroup leaves the DLQ's group alone.
func TestDeleteRefusedWhileMembersLive(t *testing.T) {
	e := newOpEnv(t)
	const topic = "busy"
	e.create(topic, 2)
	e.publishRoundRobin(topic, 4, 2)
	e.member(e.client, topic, "workers", "alpha")
	e.member(e.client, streamq.DLQTopic(topic), "medic", "beta")
	e.createGroup(topic, 0, "medic", "0-0") // a group "medic" on the topic too, without members
	e.createGroup(topic, 0, "idle", "0-0")
	require.NoError(t, e.client.ZAdd(e.ctx, e.space.Members(topic, "idle"), redisZ(1, "crashed")).Err())
	workers := admin.LiveGroup{Group: "workers", Members: []string{"alpha"}}
	medic := admin.LiveGroup{Group: "medic", DLQMembers: []string{"beta"}}
	e.waitLive(topic, []admin.LiveGroup{medic, workers})
	before := dtTopicKeys(t, e.client, topic)
	require.Contains(t, before, e.space.Members(topic, "workers"))
	require.Contains(t, before, e.space.DLQMembers(topic, "medic"))

	_, err := e.adm.DeleteGroup(e.ctx, topic, "workers")
	requireLiveMembersError(t, err, admin.LiveMembersError{
		Topic: topic, Group: "workers", Members: []string{"alpha"}, Groups: []admin.LiveGroup{workers},
	})
	_, err = e.adm.DeleteTopic(e.ctx, topic, admin.DeleteOptions{})
	requireLiveMembersError(t, err, admin.LiveMembersError{
		Topic: topic, Members: []string{"alpha", "beta"}, Groups: []admin.LiveGroup{medic, workers},
	})
	assert.Contains(t, err.Error(), `group "medic" on the DLQ: beta`)
	assert.Subset(t, dtTopicKeys(t, e.client, topic), before, "nothing was deleted (the members may add keys)")
	for p := range 2 {
		assert.Contains(t, e.groupNames(e.space.PartitionStream(topic, p)), "workers", "partition %d", p)
	}
	q, err := e.adm.QueueInfo(e.ctx, topic)
	require.NoError(t, err, "the topic is still registered")
	assert.Equal(t, int64(4), q.Length)

	// The DLQ consumer of "medic" and the crashed member of "idle" do not hold their groups.
	d, err := e.adm.DeleteGroup(e.ctx, topic, "medic")
	require.NoError(t, err)
	assert.Nil(t, d.LiveMembers)
	assert.Empty(t, d.Tombstone)
	_, err = e.adm.DeleteGroup(e.ctx, topic, "idle")
	require.NoError(t, err)
	assert.False(t, e.exists(e.space.GroupTombstone(topic, "idle")), "no tombstone without live members")

	d, err = e.adm.DeleteGroup(e.ctx, topic, "workers", admin.DeleteOptions{Force: true})
	require.NoError(t, err)
	assert.Equal(t, 2, d.Partitions)
	assert.Contains(t, d.Keys, e.space.Members(topic, "workers"))
	assert.Equal(t, []string{"alpha"}, d.LiveMembers)
	assert.Equal(t, e.space.GroupTombstone(topic, "workers"), d.Tombstone)
	e.requireTombstone(d.Tombstone)

	dt, err := e.adm.DeleteTopic(e.ctx, topic, admin.DeleteOptions{Force: true})
	require.NoError(t, err)
	assert.Contains(t, dt.LiveGroups, medic)
	assert.Equal(t, e.space.TopicTombstone(topic), dt.Tombstone)
	e.requireTombstone(dt.Tombstone)
	assert.Contains(t, dt.Keys, e.space.GroupTombstone(topic, "workers"), "the scan takes the group's tombstone")
	assert.False(t, e.exists(e.space.GroupTombstone(topic, "workers")))
	// What the running members do next (stop on the tombstone) is the Subscriber's to test.
}

// TestDeleteAfterMembersLeft: once the members closed (they left the membership), or
// crashed and their heartbeats expired, the deletes work unforced, as before, without a
// tombstone.
func TestDeleteAfterMembersLeft(t *testing.T) {
	e := newOpEnv(t)
	const topic = "quiet"
	e.create(topic, 2)
	e.publishRoundRobin(topic, 4, 2)
	stop := e.member(e.client, topic, "workers", "alpha")
	e.waitLive(topic, []admin.LiveGroup{{Group: "workers", Members: []string{"alpha"}}})
	stop()
	e.waitLive(topic, []admin.LiveGroup{})
	d, err := e.adm.DeleteGroup(e.ctx, topic, "workers")
	require.NoError(t, err)
	assert.Equal(t, 2, d.Partitions)
	assert.Nil(t, d.LiveMembers)
	assert.Empty(t, d.Tombstone)
	assert.False(t, e.exists(e.space.GroupTombstone(topic, "workers")))

	// A member whose client dies under it keeps its membership entry until the heartbeat
	// expires (LeaseTTL, 2s here); then it is not live.
	crashed := e.separateClient()
	e.member(crashed, topic, "crashers", "gamma")
	e.waitLive(topic, []admin.LiveGroup{{Group: "crashers", Members: []string{"gamma"}}})
	require.NoError(t, crashed.Close())
	e.waitLive(topic, []admin.LiveGroup{})
	require.True(t, e.exists(e.space.Members(topic, "crashers")), "the crashed member's entry is still there")
	dt, err := e.adm.DeleteTopic(e.ctx, topic)
	require.NoError(t, err)
	assert.Contains(t, dt.Keys, e.space.Members(topic, "crashers"))
	assert.Nil(t, dt.LiveGroups)
	assert.Empty(t, dt.Tombstone)
	assert.False(t, e.exists(e.space.TopicTombstone(topic)))
}

// TestTombstonesOfRecreatedTopic: CreateTopic clears the topic's tombstone; a topic that was
// recreated otherwise (a Publisher) and deleted again loses the tombstones of the earlier
// forced deletes with its other keys; DeleteGroup leaves a group tombstone alone.
func TestTombstonesOfRecreatedTopic(t *testing.T) {
	e := newOpEnv(t)
	const topic = "again"
	topicStone, groupStone := e.space.TopicTombstone(topic), e.space.GroupTombstone(topic, "g")
	require.NoError(t, e.client.Set(e.ctx, topicStone, "1", keys.TombstoneTTL).Err())
	e.create(topic, 2)
	assert.False(t, e.exists(topicStone), "CreateTopic clears the tombstone")

	e.publishRoundRobin(topic, 2, 2)
	e.createGroup(topic, 0, "g", "0-0")
	require.NoError(t, e.client.Set(e.ctx, topicStone, "1", keys.TombstoneTTL).Err())
	require.NoError(t, e.client.Set(e.ctx, groupStone, "1", keys.TombstoneTTL).Err())
	_, err := e.adm.DeleteGroup(e.ctx, topic, "g")
	require.NoError(t, err)
	assert.True(t, e.exists(groupStone), "an unforced DeleteGroup leaves tombstones alone")

	d, err := e.adm.DeleteTopic(e.ctx, topic)
	require.NoError(t, err)
	assert.Subset(t, d.Keys, []string{topicStone, groupStone})
	assert.False(t, e.exists(topicStone))
	assert.False(t, e.exists(groupStone))
	assert.Empty(t, d.Tombstone)
}

// TestDeleteTopicCountsOrphanMembership: a live membership zset of a group found on no
// stream and not declared (its group destroyed under its members) is found by DeleteTopic's
// scan, though LiveMembers, which reads the known groups only, does not see it.
func TestDeleteTopicCountsOrphanMembership(t *testing.T) {
	e := newOpEnv(t)
	const topic = "orphan"
	e.create(topic, 1)
	now, err := e.client.Time(e.ctx).Result()
	require.NoError(t, err)
	require.NoError(t, e.client.ZAdd(e.ctx, e.space.Members(topic, "ghost"), redisZ(float64(now.Add(time.Minute).UnixMilli()), "m")).Err())
	require.NoError(t, e.client.HSet(e.ctx, e.space.MemberCaps(topic, "ghost"), "m", "0,0,0").Err())
	live, err := e.adm.LiveMembers(e.ctx, topic)
	require.NoError(t, err)
	assert.Empty(t, live)
	_, err = e.adm.DeleteTopic(e.ctx, topic)
	requireLiveMembersError(t, err, admin.LiveMembersError{
		Topic: topic, Members: []string{"m"}, Groups: []admin.LiveGroup{{Group: "ghost", Members: []string{"m"}}},
	})
}

func TestLiveMembersErrors(t *testing.T) {
	e := newOpEnv(t)
	_, err := e.adm.LiveMembers(e.ctx, "unknown")
	assert.ErrorIs(t, err, admin.ErrTopicNotFound)
	_, err = e.adm.LiveMembers(e.ctx, "bad{topic}")
	assert.ErrorIs(t, err, admin.ErrInvalidArgument)
}

// separateClient is a client of the env's server of its own, for a member to crash with.
func (e *opEnv) separateClient() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: e.client.Options().Addr})
	e.t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestDeleteRefusedOnCluster: the live-member check reads a topic's membership zsets in one
// script on the node of the topic's slot; the refusal and the forced delete work on a
// Cluster as on one node.
func TestDeleteRefusedOnCluster(t *testing.T) {
	t.Parallel()
	client := redistest.StartCluster(t, 3, 0).Client(t)
	ctx := context.Background()
	space := keys.New("", "")
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	const topic, group = "spread", "workers"
	require.NoError(t, adm.CreateTopic(ctx, topic, 8))
	cfg := fastSub(client, group, 0)
	cfg.Membership.ConsumerName = "alpha"
	sub, err := streamq.NewSubscriber(cfg, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	_, err = sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	want := []admin.LiveGroup{{Group: group, Members: []string{"alpha"}}}
	require.Eventually(t, func() bool {
		live, err := adm.LiveMembers(ctx, topic)
		return err == nil && assert.ObjectsAreEqual(want, live)
	}, 20*time.Second, 20*time.Millisecond)

	_, err = adm.DeleteGroup(ctx, topic, group)
	requireLiveMembersError(t, err, admin.LiveMembersError{Topic: topic, Group: group, Members: []string{"alpha"}, Groups: want})
	_, err = adm.DeleteTopic(ctx, topic)
	requireLiveMembersError(t, err, admin.LiveMembersError{Topic: topic, Members: []string{"alpha"}, Groups: want})

	d, err := adm.DeleteTopic(ctx, topic, admin.DeleteOptions{Force: true})
	require.NoError(t, err)
	assert.Equal(t, want, d.LiveGroups)
	ttl, err := client.PTTL(ctx, space.TopicTombstone(topic)).Result()
	require.NoError(t, err)
	assert.Positive(t, ttl)
}
