package admin_test

import (
	"context"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
)

// runningMember starts a Subscriber of group on topic that acks everything and returns a
// channel closed when its subscription has stopped.
func (e *opEnv) runningMember(topic, group string) <-chan struct{} {
	e.t.Helper()
	cfg := opSub(e, group)
	cfg.Membership.LeaseTTL, cfg.Membership.RenewInterval = 2*time.Second, 300*time.Millisecond
	sub, err := streamq.NewSubscriber(cfg, watermill.NopLogger{})
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = sub.Close() })
	ch, err := sub.Subscribe(context.Background(), topic)
	require.NoError(e.t, err)
	stopped := make(chan struct{})
	go func() {
		for m := range ch {
			m.Ack()
		}
		close(stopped)
	}()
	return stopped
}

func requireStops(t *testing.T, stopped <-chan struct{}) {
	t.Helper()
	select {
	case <-stopped:
	case <-time.After(15 * time.Second):
		t.Fatal("the running member's subscription did not stop")
	}
}

// TestForcedDeletesAreNotUndoneByRunningMembers: a forced DeleteGroup or DeleteTopic under a
// live member stops the member's subscription (its channel closes), and what was deleted stays
// deleted several rebalance rounds later; only the tombstone is left.
func TestForcedDeletesAreNotUndoneByRunningMembers(t *testing.T) {
	t.Run("group", func(t *testing.T) {
		e := newOpEnv(t)
		const topic = "forced-group"
		e.create(topic, 2)
		stopped := e.runningMember(topic, "workers")
		e.waitLive(topic, []admin.LiveGroup{{Group: "workers", Members: []string{"alpha"}}})
		_, err := e.adm.DeleteGroup(e.ctx, topic, "workers")
		requireLiveMembersError(t, err, admin.LiveMembersError{Topic: topic, Group: "workers", Members: []string{"alpha"},
			Groups: []admin.LiveGroup{{Group: "workers", Members: []string{"alpha"}}}})

		_, err = e.adm.DeleteGroup(e.ctx, topic, "workers", admin.DeleteOptions{Force: true})
		require.NoError(t, err)
		e.publishRoundRobin(topic, 4, 2) // the member's next read finds no group
		requireStops(t, stopped)
		time.Sleep(10 * opSub(e, "workers").Membership.RebalanceInterval)
		for p := range 2 {
			assert.NotContains(t, e.groupNames(e.space.PartitionStream(topic, p)), "workers", "partition %d: the group came back", p)
		}
		assert.False(t, e.exists(e.space.Members(topic, "workers")), "the membership came back")
		e.requireTombstone(e.space.GroupTombstone(topic, "workers"))
	})
	t.Run("topic", func(t *testing.T) {
		e := newOpEnv(t)
		const topic = "forced-topic"
		e.create(topic, 2)
		e.publishRoundRobin(topic, 4, 2)
		stopped := e.runningMember(topic, "workers")
		e.waitLive(topic, []admin.LiveGroup{{Group: "workers", Members: []string{"alpha"}}})

		_, err := e.adm.DeleteTopic(e.ctx, topic, admin.DeleteOptions{Force: true})
		require.NoError(t, err)
		requireStops(t, stopped)
		time.Sleep(10 * opSub(e, "workers").Membership.RebalanceInterval)
		assert.Equal(t, []string{e.space.TopicTombstone(topic)}, dtTopicKeys(t, e.client, topic),
			"only the tombstone is left")
	})
}
