package admin_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
)

// TestGroupStatsShowsAnOutage: a subscription whose handler marks its failures with
// streamq.Outage waits the outage out on each partition; GroupStats shows it there (the
// member, since when, the next probe, the reason) and no more once a probe succeeded.
func TestGroupStatsShowsAnOutage(t *testing.T) {
	e := newOpEnv(t)
	const topic, group = "outages", "payments"
	e.create(topic, 2)
	for p := range 2 {
		require.NoError(t, e.pub.Publish(topic, opMsg("order", p), opMsg("order", p)))
	}
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{Client: e.client, ConsumerGroup: group,
		Membership: streamq.MembershipConfig{ConsumerName: "worker-1"},
		Retry:      streamq.RetryConfig{Outage: streamq.OutageConfig{Backoff: 200 * time.Millisecond, MaxBackoff: 400 * time.Millisecond}},
	}, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	msgs, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	var up atomic.Bool
	go func() {
		for m := range msgs {
			if up.Load() {
				m.Ack()
				continue
			}
			_ = streamq.Outage(m, errors.New("payments: connection refused"))
			m.Nack()
		}
	}()
	var gs admin.GroupStats
	require.Eventually(t, func() bool {
		gs, err = e.adm.GroupStats(e.ctx, topic, group)
		return err == nil && gs.Outages == 2
	}, 20*time.Second, 50*time.Millisecond)
	o := gs.Partitions[0].Outage
	require.NotNil(t, o)
	assert.Equal(t, "worker-1", o.Member)
	assert.Equal(t, "payments: connection refused", o.Reason)
	assert.False(t, o.Since.IsZero())
	assert.False(t, o.NextProbe.Before(o.Since))
	assert.True(t, strings.HasPrefix(o.At(o.Since), "downstream failing since "), o.At(o.Since))

	up.Store(true)
	require.Eventually(t, func() bool {
		gs, err = e.adm.GroupStats(e.ctx, topic, group)
		return err == nil && gs.Outages == 0 && gs.Pending == 0 && gs.Lag == 0
	}, 20*time.Second, 50*time.Millisecond)
	assert.Nil(t, gs.Partitions[1].Outage)
}
