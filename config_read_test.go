package streamq_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
)

func TestTopicsConfigRejects(t *testing.T) {
	t.Parallel()
	client := unusedClient(t)
	cfg := func(topics map[string]streamq.ReadConfig) streamq.SubscriberConfig {
		return streamq.SubscriberConfig{Client: client, Topics: topics}
	}
	invalid := []error{streamq.ErrInvalidConfig}
	badName := []error{streamq.ErrInvalidConfig, streamq.ErrInvalidName}
	tests := []struct {
		name  string
		input streamq.SubscriberConfig
		want  []error
	}{
		{name: "empty topic name", input: cfg(map[string]streamq.ReadConfig{"": {BatchCount: 1}}), want: badName},
		{name: "topic name with a brace", input: cfg(map[string]streamq.ReadConfig{"a{b": {BatchCount: 1}}), want: badName},
		{name: "DLQ of a DLQ", input: cfg(map[string]streamq.ReadConfig{streamq.DLQTopic(streamq.DLQTopic("a")): {}}), want: badName},
		{name: "negative BatchCount", input: cfg(map[string]streamq.ReadConfig{"a": {BatchCount: -1}}), want: invalid},
		{name: "negative BlockTime", input: cfg(map[string]streamq.ReadConfig{"a": {BlockTime: -time.Millisecond}}), want: invalid},
		{name: "BlockTime beyond LeaseTTL - RenewInterval", input: cfg(map[string]streamq.ReadConfig{"a": {BlockTime: 8 * time.Second}}), want: invalid},
		{name: "remainder equal to modulo", input: cfg(map[string]streamq.ReadConfig{"a": {PartitionModulo: 2, PartitionRemainder: 2}}), want: invalid},
		{name: "remainder above modulo", input: cfg(map[string]streamq.ReadConfig{"a": {PartitionModulo: 2, PartitionRemainder: 3}}), want: invalid},
		{name: "remainder without modulo", input: cfg(map[string]streamq.ReadConfig{"a": {PartitionRemainder: 1}}), want: invalid},
		{name: "negative modulo", input: cfg(map[string]streamq.ReadConfig{"a": {PartitionModulo: -2}}), want: invalid},
		{name: "negative remainder", input: cfg(map[string]streamq.ReadConfig{"a": {PartitionModulo: 2, PartitionRemainder: -1}}), want: invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { requireSubscriberRejected(t, tt.input, tt.want) })
	}
}

func TestTopicsConfigAccepts(t *testing.T) {
	t.Parallel()
	client := unusedClient(t)
	tests := []struct {
		name  string
		input map[string]streamq.ReadConfig
	}{
		{name: "nil map", input: nil},
		{name: "empty options", input: map[string]streamq.ReadConfig{"a": {}}},
		{name: "every field", input: map[string]streamq.ReadConfig{"a": {BatchCount: 5, BlockTime: time.Second, PartitionModulo: 3, PartitionRemainder: 2}}},
		{name: "modulo only", input: map[string]streamq.ReadConfig{"a": {PartitionModulo: 2}}},
		{name: "a DLQ topic", input: map[string]streamq.ReadConfig{streamq.DLQTopic("a"): {BatchCount: 1, PartitionModulo: 2, PartitionRemainder: 1}}},
		{name: "several topics", input: map[string]streamq.ReadConfig{"a": {BatchCount: 1}, "b": {BatchCount: 2}, streamq.DLQTopic("a"): {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{Client: client, Topics: tt.input}, nil)
			require.NoError(t, err)
			require.NoError(t, sub.Close())
		})
	}
}

// TestTopicSettings: a zero field of a Topics entry takes the Subscriber's value, and the
// filter pair replaces the Subscriber's pair together.
func TestTopicSettings(t *testing.T) {
	t.Parallel()
	base := streamq.SubscriberConfig{Read: streamq.ReadConfig{BatchCount: 50, BlockTime: 100 * time.Millisecond, PartitionModulo: 3, PartitionRemainder: 1}}
	tests := []struct {
		name  string
		input streamq.ReadConfig
		topic string // the topic subscribed to; the options are for "a"
		want  streamq.ReadConfig
	}{
		{name: "topic not listed", input: streamq.ReadConfig{BatchCount: 5}, topic: "b", want: streamq.ReadConfig{BatchCount: 50, BlockTime: 100 * time.Millisecond, PartitionModulo: 3, PartitionRemainder: 1}},
		{name: "empty options", input: streamq.ReadConfig{}, topic: "a", want: streamq.ReadConfig{BatchCount: 50, BlockTime: 100 * time.Millisecond, PartitionModulo: 3, PartitionRemainder: 1}},
		{name: "batch and block", input: streamq.ReadConfig{BatchCount: 5, BlockTime: time.Second}, topic: "a", want: streamq.ReadConfig{BatchCount: 5, BlockTime: time.Second, PartitionModulo: 3, PartitionRemainder: 1}},
		{name: "filter replaces the pair", input: streamq.ReadConfig{PartitionModulo: 2}, topic: "a", want: streamq.ReadConfig{BatchCount: 50, BlockTime: 100 * time.Millisecond, PartitionModulo: 2, PartitionRemainder: 0}},
		{name: "modulo 1 turns the filter off", input: streamq.ReadConfig{PartitionModulo: 1}, topic: "a", want: streamq.ReadConfig{BatchCount: 50, BlockTime: 100 * time.Millisecond, PartitionModulo: 1, PartitionRemainder: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base
			cfg.Topics = map[string]streamq.ReadConfig{"a": tt.input}
			assert.Equal(t, tt.want, streamq.ReadFor(cfg, tt.topic))
		})
	}
}

// TestTopicsAreCopied: changing the map after NewSubscriber changes nothing.
func TestTopicsAreCopied(t *testing.T) {
	t.Parallel()
	topics := map[string]streamq.ReadConfig{"a": {BatchCount: 5}}
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{Client: unusedClient(t), Topics: topics}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	topics["a"] = streamq.ReadConfig{BatchCount: 9}
	topics["b"] = streamq.ReadConfig{BatchCount: 1}
	assert.Equal(t, 5, streamq.ReadFor(streamq.SubscriberConfigOf(sub), "a").BatchCount)
	assert.Equal(t, streamq.DefaultBatchCount, streamq.ReadFor(streamq.SubscriberConfigOf(sub), "b").BatchCount)
}
