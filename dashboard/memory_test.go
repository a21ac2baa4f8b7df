package dashboard_test

import (
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/dashboard"
)

// memoryOfAPI is the memory part of api/topics and api/topics/{topic}.
type memoryOfAPI struct {
	Full         bool    `json:"full"`
	RefusedSince *string `json:"refusedSince"`
	Servers      []struct {
		Addr     string `json:"addr"`
		MaxBytes int64  `json:"maxBytes"`
		Full     bool   `json:"full"`
		Text     string `json:"text"`
	} `json:"servers"`
}

type healthOfAPI struct {
	State    string `json:"state"`
	Problems []struct {
		Code string `json:"code"`
		Text string `json:"text"`
	} `json:"problems"`
}

// TestAPIMemoryFull: once a Publisher was refused for memory, the topics list and the topic
// show the server full and a critical redis-full problem saying since when.
func TestAPIMemoryFull(t *testing.T) {
	e := newEnv(t)
	const topic = "full"
	require.NoError(t, e.adm.CreateTopic(e.ctx, topic, 1))
	s := e.serve(dashboard.Options{})
	var topics struct {
		Topics []struct {
			Memory memoryOfAPI `json:"memory"`
			Health healthOfAPI `json:"health"`
		} `json:"topics"`
	}
	s.getJSON("/api/topics", &topics)
	require.Len(t, topics.Topics, 1)
	require.Len(t, topics.Topics[0].Memory.Servers, 1)
	assert.Equal(t, e.client.Options().Addr, topics.Topics[0].Memory.Servers[0].Addr)
	assert.Contains(t, topics.Topics[0].Memory.Servers[0].Text, "(no maxmemory)")
	assert.Equal(t, "ok", topics.Topics[0].Health.State)

	require.NoError(t, e.client.ConfigSet(e.ctx, "maxmemory-policy", "noeviction").Err())
	require.NoError(t, e.client.ConfigSet(e.ctx, "maxmemory", "1").Err())
	t.Cleanup(func() { _ = e.client.ConfigSet(e.ctx, "maxmemory", "0").Err() })
	err := e.pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("x")))
	require.ErrorIs(t, err, streamq.ErrRedisFull)

	var one struct {
		Memory memoryOfAPI `json:"memory"`
		Health healthOfAPI `json:"health"`
	}
	s.getJSON("/api/topics/"+topic, &one)
	assert.True(t, one.Memory.Full)
	require.NotNil(t, one.Memory.RefusedSince)
	assert.Equal(t, "critical", one.Health.State)
	require.NotEmpty(t, one.Health.Problems)
	assert.Equal(t, "redis-full", one.Health.Problems[0].Code)
	assert.Contains(t, one.Health.Problems[0].Text, "Redis full: publishing refused since ")
}
