package main

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/keys"
)

// liveMember runs a Subscriber in group on topic (a DLQ topic name consumes the
// DLQ), acking everything, until the test ends.
func (e *cliEnv) liveMember(topic, group string) {
	t := e.t
	sub := fastSubscriber(t, e.client, group, 0)
	t.Cleanup(func() { _ = sub.Close() })
	ctx, cancel := context.WithCancel(e.ctx)
	t.Cleanup(cancel)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	go func() {
		for m := range ch {
			m.Ack()
		}
	}()
}

// TestCLIDeleteRefusedWhileMembersLive: delete-group and delete-topic refuse while members
// are live, naming them, with exit code 4 and nothing deleted; with --force the confirmation
// says members are live, and the delete leaves a tombstone.
func TestCLIDeleteRefusedWhileMembersLive(t *testing.T) {
	e := newCLIEnv(t)
	space := keys.New("", "")
	require.NoError(t, e.adm.CreateTopic(e.ctx, ordersTopic, 2))
	require.NoError(t, e.pub.Publish(ordersTopic, forced([]byte("x"), 0), forced([]byte("y"), 1)))
	e.liveMember(ordersTopic, payments)
	e.liveMember(streamq.DLQTopic(ordersTopic), "medic")
	var live []admin.LiveGroup
	require.Eventually(t, func() bool {
		var err error
		live, err = e.adm.LiveMembers(e.ctx, ordersTopic)
		return err == nil && len(live) == 2 && len(live[0].DLQMembers) == 1 && len(live[1].Members) == 1
	}, 15*time.Second, 20*time.Millisecond, "a live member in %q and one on the DLQ in \"medic\"", payments)
	dlqMember, member := live[0].DLQMembers[0], live[1].Members[0]
	requireStill := func(t *testing.T) {
		t.Helper()
		_, err := e.adm.GroupStats(e.ctx, ordersTopic, payments)
		require.NoError(t, err, "the group is still there")
		q, err := e.adm.QueueInfo(e.ctx, ordersTopic)
		require.NoError(t, err, "the topic is still there")
		assert.Equal(t, int64(2), q.Length)
	}

	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		{"delete-group", []string{"delete-group", ordersTopic, payments, "--yes"}, exitLiveMembers,
			[]string{`refusing to delete consumer group "payments" of topic "orders": live members`, member, "--force"}},
		{"delete-topic", []string{"delete-topic", ordersTopic, "--yes", "--json"}, exitLiveMembers,
			[]string{`refusing to delete topic "orders": live members`, `group "payments": ` + member,
				`group "medic" on the DLQ: ` + dlqMember, "--force"}},
		{"delete-group --force unconfirmed", []string{"delete-group", ordersTopic, payments, "--force"}, exitUsage,
			[]string{"while members are live (" + member + "), which will stop", "pass --yes"}},
		{"delete-topic --force unconfirmed", []string{"delete-topic", ordersTopic, "--force"}, exitUsage,
			[]string{`while members are live (group "medic" on the DLQ: ` + dlqMember + `; group "payments": ` + member + `)`, "pass --yes"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.with(t).run(c.args...)
			assert.Equal(t, c.code, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			for _, s := range c.stderr {
				assert.Contains(t, r.stderr, s)
			}
			assert.Empty(t, r.stdout)
			requireStill(t)
		})
	}

	out := e.ok("delete-group", ordersTopic, payments, "--force", "--yes")
	assert.Contains(t, out, `deleted group "payments" of topic "orders": destroyed on 2 partitions`)
	groupStone := space.GroupTombstone(ordersTopic, payments)
	assert.Contains(t, out, "live members ("+member+") stop when they find the group gone: tombstone "+groupStone+" kept 24h")
	e.requireTombstone(groupStone)

	var dt deletedTopicView
	raw := e.jsonOf(&dt, "delete-topic", ordersTopic, "--force", "--yes")
	requireKeys(t, raw, "topic", "keysRemoved", "keys", "liveMembers", "tombstone")
	assert.Contains(t, dt.LiveMembers, liveGroupView{Group: "medic", Members: []string{}, DLQMembers: []string{dlqMember}})
	assert.Equal(t, space.TopicTombstone(ordersTopic), dt.Tombstone)
	e.requireTombstone(dt.Tombstone)
}

// TestCLIDeleteForceWithoutLiveMembers: --force without live members deletes as without it,
// leaving no tombstone; the JSON says so.
func TestCLIDeleteForceWithoutLiveMembers(t *testing.T) {
	e := newCLIEnv(t)
	require.NoError(t, e.adm.CreateTopic(e.ctx, ordersTopic, 2))
	require.NoError(t, e.pub.Publish(ordersTopic, forced([]byte("x"), 0), forced([]byte("y"), 1)))
	e.consume(ordersTopic, payments, 2, 2) // the member closed: it left the group

	var dg deletedGroupView
	raw := e.jsonOf(&dg, "delete-group", ordersTopic, payments, "--force", "--yes")
	requireKeys(t, raw, "liveMembers", "tombstone")
	assert.Equal(t, []string{}, dg.LiveMembers)
	assert.Empty(t, dg.Tombstone)
	assert.Zero(t, e.client.Exists(e.ctx, keys.New("", "").GroupTombstone(ordersTopic, payments)).Val())
	out := e.ok("delete-topic", ordersTopic, "--yes")
	assert.NotContains(t, out, "tombstone")
}

func TestCLIHelpNamesLiveMembersExitCode(t *testing.T) {
	e := newCLIEnv(t)
	assert.Contains(t, e.ok("--help"), "4    refused: delete-group or delete-topic found live members")
	for _, cmd := range []string{"delete-group", "delete-topic"} {
		help := e.ok(cmd, "--help")
		assert.Contains(t, help, "exits 4", cmd)
		assert.Contains(t, help, "kept "+tombstoneTTL(), cmd)
		assert.Contains(t, help, "--force", cmd)
	}
}

func (e *cliEnv) requireTombstone(key string) {
	e.t.Helper()
	ttl, err := e.client.PTTL(e.ctx, key).Result()
	require.NoError(e.t, err)
	assert.Positive(e.t, ttl, "tombstone %s exists and expires", key)
	assert.LessOrEqual(e.t, ttl, keys.TombstoneTTL)
	assert.NotErrorIs(e.t, e.client.Get(e.ctx, key).Err(), redis.Nil)
}
