package retry

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

func TestRetryItemEncodeDecodeRoundTrip(t *testing.T) {
	fields := map[string]any{
		"_watermill_message_uuid": "u-1",
		"metadata":                []byte("\x81\xa1k\xa1v"),
		"payload":                 "hello",
		"n":                       int64(7),
		"empty":                   nil,
	}
	item, err := NewItem(Origin{Topic: "orders", Partition: 3, RetryCount: 2, MaxRetries: 5, OriginalID: "1700000000000-0", Group: "payments"}, fields)
	require.NoError(t, err)
	assert.Equal(t, "orders", item.Topic)
	assert.Equal(t, "3", item.PartitionID)
	assert.Equal(t, "2", item.RetryCount)
	assert.Equal(t, "5", item.MaxRetries)
	assert.Len(t, item.Fields, 2*len(fields))

	blob, err := item.Encode()
	require.NoError(t, err)
	back, err := DecodeItem(blob)
	require.NoError(t, err)
	assert.Equal(t, item, back)
	assert.Equal(t, map[string]any{
		"_watermill_message_uuid": "u-1",
		"metadata":                "\x81\xa1k\xa1v",
		"payload":                 "hello",
		"n":                       "7",
		"empty":                   "",
	}, back.Values())

	// The blob is a msgpack map with the seed's field names, as move.lua reads it.
	var raw map[string]any
	require.NoError(t, msgpack.Unmarshal([]byte(blob), &raw))
	for _, k := range []string{"topic", "partitionId", "retryCount", "maxRetries", "originalMessageId", "group", "fields"} {
		assert.Contains(t, raw, k)
	}
}

func TestRetryItemDecodeRejectsGarbage(t *testing.T) {
	for _, blob := range []string{"", "\xc1", "not msgpack", "\x92\x01\x02"} {
		_, err := DecodeItem(blob)
		assert.Error(t, err, "%q", blob)
	}
}

func TestRetryNewItemRejectsUnsupportedValue(t *testing.T) {
	_, err := NewItem(Origin{Topic: "t", RetryCount: 1, MaxRetries: 1, Group: "g"}, map[string]any{"f": 1.5})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"f"`)
}

func TestRetryItemPartition(t *testing.T) {
	tests := []struct {
		id   string
		want int
	}{
		{"abc", 0},
		{"-3", 0},
		{"4", 4},
		{"0", 0},
		{"", 0},
		{"1.5", 0},
		{"99999999999999999999999", 0},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			assert.Equal(t, tc.want, Item{PartitionID: tc.id}.Partition())
		})
	}
}
