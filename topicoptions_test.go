package streamq

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTopicOptionsConfigRejects(t *testing.T) {
	client := unusedClient(t)
	cfg := func(topics map[string]TopicOptions) SubscriberConfig {
		return SubscriberConfig{Client: client, Topics: topics}
	}
	invalid := []error{ErrInvalidConfig}
	badName := []error{ErrInvalidConfig, ErrInvalidName}
	tests := []struct {
		name  string
		input SubscriberConfig
		want  []error
	}{
		{name: "empty topic name", input: cfg(map[string]TopicOptions{"": {BatchCount: 1}}), want: badName},
		{name: "topic name with a brace", input: cfg(map[string]TopicOptions{"a{b": {BatchCount: 1}}), want: badName},
		{name: "DLQ of a DLQ", input: cfg(map[string]TopicOptions{DLQTopic(DLQTopic("a")): {}}), want: badName},
		{name: "negative BatchCount", input: cfg(map[string]TopicOptions{"a": {BatchCount: -1}}), want: invalid},
		{name: "negative BlockTime", input: cfg(map[string]TopicOptions{"a": {BlockTime: -time.Millisecond}}), want: invalid},
		{name: "BlockTime beyond LeaseTTL - RenewInterval", input: cfg(map[string]TopicOptions{"a": {BlockTime: 8 * time.Second}}), want: invalid},
		{name: "remainder equal to modulo", input: cfg(map[string]TopicOptions{"a": {PartitionModulo: 2, PartitionRemainder: 2}}), want: invalid},
		{name: "remainder above modulo", input: cfg(map[string]TopicOptions{"a": {PartitionModulo: 2, PartitionRemainder: 3}}), want: invalid},
		{name: "remainder without modulo", input: cfg(map[string]TopicOptions{"a": {PartitionRemainder: 1}}), want: invalid},
		{name: "negative modulo", input: cfg(map[string]TopicOptions{"a": {PartitionModulo: -2}}), want: invalid},
		{name: "negative remainder", input: cfg(map[string]TopicOptions{"a": {PartitionModulo: 2, PartitionRemainder: -1}}), want: invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub, err := NewSubscriber(tt.input, nil)
			require.Error(t, err)
			assert.Nil(t, sub)
			for _, want := range tt.want {
				assert.ErrorIs(t, err, want)
			}
		})
	}
}

func TestTopicOptionsConfigAccepts(t *testing.T) {
	client := unusedClient(t)
	tests := []struct {
		name  string
		input map[string]TopicOptions
	}{
		{name: "nil map", input: nil},
		{name: "empty options", input: map[string]TopicOptions{"a": {}}},
		{name: "every field", input: map[string]TopicOptions{"a": {BatchCount: 5, BlockTime: time.Second, PartitionModulo: 3, PartitionRemainder: 2}}},
		{name: "modulo only", input: map[string]TopicOptions{"a": {PartitionModulo: 2}}},
		{name: "a DLQ topic", input: map[string]TopicOptions{DLQTopic("a"): {BatchCount: 1, PartitionModulo: 2, PartitionRemainder: 1}}},
		{name: "several topics", input: map[string]TopicOptions{"a": {BatchCount: 1}, "b": {BatchCount: 2}, DLQTopic("a"): {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub, err := NewSubscriber(SubscriberConfig{Client: client, Topics: tt.input}, nil)
			require.NoError(t, err)
			require.NoError(t, sub.Close())
		})
	}
}

// TestTopicSettings: a zero field of TopicOptions takes the Subscriber's value, and the
// filter pair replaces the Subscriber's pair together.
func TestTopicSettings(t *testing.T) {
	base := SubscriberConfig{BatchCount: 50, BlockTime: 100 * time.Millisecond, PartitionModulo: 3, PartitionRemainder: 1}
	tests := []struct {
		name  string
		input TopicOptions
		topic string // the topic subscribed to; the options are for "a"
		want  topicSettings
	}{
		{name: "topic not listed", input: TopicOptions{BatchCount: 5}, topic: "b", want: topicSettings{batch: 50, block: 100 * time.Millisecond, modulo: 3, remainder: 1}},
		{name: "empty options", input: TopicOptions{}, topic: "a", want: topicSettings{batch: 50, block: 100 * time.Millisecond, modulo: 3, remainder: 1}},
		{name: "batch and block", input: TopicOptions{BatchCount: 5, BlockTime: time.Second}, topic: "a", want: topicSettings{batch: 5, block: time.Second, modulo: 3, remainder: 1}},
		{name: "filter replaces the pair", input: TopicOptions{PartitionModulo: 2}, topic: "a", want: topicSettings{batch: 50, block: 100 * time.Millisecond, modulo: 2, remainder: 0}},
		{name: "modulo 1 turns the filter off", input: TopicOptions{PartitionModulo: 1}, topic: "a", want: topicSettings{batch: 50, block: 100 * time.Millisecond, modulo: 1, remainder: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base
			cfg.Topics = map[string]TopicOptions{"a": tt.input}
			assert.Equal(t, tt.want, cfg.settingsFor(tt.topic))
		})
	}
}

// TestTopicOptionsAreCopied: changing the map after NewSubscriber changes nothing.
func TestTopicOptionsAreCopied(t *testing.T) {
	topics := map[string]TopicOptions{"a": {BatchCount: 5}}
	sub, err := NewSubscriber(SubscriberConfig{Client: unusedClient(t), Topics: topics}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	topics["a"] = TopicOptions{BatchCount: 9}
	topics["b"] = TopicOptions{BatchCount: 1}
	assert.Equal(t, 5, sub.config.settingsFor("a").batch)
	assert.Equal(t, DefaultBatchCount, sub.config.settingsFor("b").batch)
}
