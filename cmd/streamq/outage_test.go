package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
)

// TestCLIStatsShowsAnOutage: while a subscription waits out a downstream outage, streamq
// stats says which partition is paused, since when, when the next probe goes and why, and
// -o json carries the same.
func TestCLIStatsShowsAnOutage(t *testing.T) {
	e := newCLIEnv(t)
	const topic, group = "cli-outage", "billing"
	require.NoError(t, e.adm.CreateTopic(e.ctx, topic, 1))
	require.NoError(t, e.pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("x"))))
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{Client: e.client, ConsumerGroup: group,
		Membership: streamq.MembershipConfig{ConsumerName: "biller"}}, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	msgs, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	go func() {
		for m := range msgs {
			_ = streamq.Outage(m, errors.New("ledger: connection refused"))
			m.Nack()
		}
	}()
	require.Eventually(t, func() bool { return len(sub.Stats().Outages) == 1 }, 20*time.Second, 50*time.Millisecond)
	require.Eventually(t, func() bool {
		s, err := e.adm.GroupStats(e.ctx, topic, group)
		return err == nil && s.Outages == 1
	}, 10*time.Second, 50*time.Millisecond)
	out := e.ok("stats", topic, group)
	assert.Regexp(t, `partition 0 paused: downstream failing since .* \(\d+s\), (next probe in \d+s|probing now), \d+ probes failed \(biller\): ledger: connection refused`, out)
	var v statsView
	e.jsonOf(&v, "stats", topic, group)
	assert.Equal(t, 1, v.Outages)
	require.NotNil(t, v.Partitions[0].Outage)
	assert.Equal(t, "biller", v.Partitions[0].Outage.Member)
	assert.Equal(t, "ledger: connection refused", v.Partitions[0].Outage.Reason)
}
