package dashboard_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/dashboard"
)

// TestGroupPageShowsAnOutage: a group whose handler marks its failures with streamq.Outage
// shows on its page, per partition, "paused: downstream failing since …", and in its health
// (the group page's and the Topics page's) one downstream-outage warning instead of "nothing
// consumed".
func TestGroupPageShowsAnOutage(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, e.adm.CreateTopic(e.ctx, "invoices", 2))
	for i := range 4 { // two on each partition (a message without a key goes to a random one)
		m := message.NewMessage(watermill.NewUUID(), []byte("x"))
		m.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(i%2))
		require.NoError(t, e.pub.Publish("invoices", m))
	}
	sub, err := streamq.NewSubscriber(workerConfig(e.client, "billing", 2), watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	msgs, err := sub.Subscribe(context.Background(), "invoices")
	require.NoError(t, err)
	go func() {
		for m := range msgs {
			_ = streamq.Outage(m, errors.New("ledger: 503 Service Unavailable"))
			m.Nack()
		}
	}()
	require.Eventually(t, func() bool {
		s, err := e.adm.GroupStats(e.ctx, "invoices", "billing")
		return err == nil && s.Outages == 2
	}, 20*time.Second, 50*time.Millisecond)
	s := e.serve(dashboard.Options{})

	var page struct {
		groupPageJSON
		Partitions []struct {
			Partition int `json:"partition"`
			Outage    *struct {
				Member    string    `json:"member"`
				Since     time.Time `json:"since"`
				NextProbe time.Time `json:"nextProbe"`
				Reason    string    `json:"reason"`
			} `json:"outage"`
		} `json:"partitions"`
	}
	s.getJSON("/api/topics/invoices/groups/billing", &page)
	require.Len(t, page.Partitions, 2)
	for _, p := range page.Partitions {
		require.NotNil(t, p.Outage, "partition %d", p.Partition)
		assert.Equal(t, "ledger: 503 Service Unavailable", p.Outage.Reason)
		assert.False(t, p.Outage.NextProbe.Before(p.Outage.Since))
	}
	require.Len(t, page.Health.Problems, 1)
	p := page.Health.Problems[0]
	assert.Equal(t, "downstream-outage", p.Code)
	assert.True(t, strings.HasPrefix(p.Text, "paused: downstream failing on partitions 0, 1, "), p.Text)
	assert.Contains(t, p.Text, "(ledger: 503 Service Unavailable); since ")
	assert.Equal(t, "streamq stats invoices billing", p.Command)
	require.NotNil(t, p.Since)
}
