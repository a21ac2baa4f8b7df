package dlq

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// Every dead letter is built one way: the reason in the metadata, a delivery's marks left out,
// the first entry's time as the timestamp (FailedAt without one), read back by DecodeRecord
// and codec.Decode.
func TestNewRecord(t *testing.T) {
	failed := time.UnixMilli(1_800_000_000_000)
	tests := []struct {
		name   string
		f      Failure
		wantMD map[string]string
		wantTS time.Time
	}{
		{"retries exhausted", Failure{
			Topic: "orders", Partition: 3, UUID: "u1", Payload: []byte("p"),
			Metadata: map[string]string{"k": "v", codec.HeaderOriginalID: "1700000000000-0", codec.HeaderRetryGroup: "g",
				codec.HeaderPublishedStreamID: "9-9", codec.HeaderOutage: "down", codec.HeaderSnooze: "1s"},
			StreamID: "1700000005000-0", OriginalID: "1700000000000-0", Reason: "retries exhausted (3): boom", Group: "g",
			RetryCount: 3, MaxRetries: 3, FailedAt: failed,
		}, map[string]string{"k": "v", codec.HeaderOriginalID: "1700000000000-0", codec.HeaderDeadLetter: "retries exhausted (3): boom"},
			streamid.Time("1700000000000-0")},
		{"poison", Failure{Topic: "orders", UUID: "u2", Payload: []byte("raw body"), StreamID: "5-0", OriginalID: "5-0",
			Reason: "malformed entry: x", Group: "g", FailedAt: failed, Raw: `{"a":"b"}`},
			map[string]string{codec.HeaderDeadLetter: "malformed entry: x"}, streamid.Time("5-0")},
		{"added by an operator, no ids", Failure{Topic: "orders", UUID: "u3", Reason: "bad", FailedAt: failed},
			map[string]string{codec.HeaderDeadLetter: "bad"}, failed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewRecord(tc.f)
			require.NoError(t, err)
			back := DecodeRecord(stored(r.Fields()))
			assert.Equal(t, tc.f.Topic, back.OriginalTopic)
			assert.Equal(t, tc.f.Partition, back.Partition)
			assert.Equal(t, tc.f.OriginalID, back.OriginalMessageID)
			assert.Equal(t, tc.f.StreamID, back.OriginalStreamID)
			assert.Equal(t, tc.f.Reason, back.Reason)
			assert.Equal(t, tc.f.Group, back.Group)
			assert.Equal(t, tc.f.RetryCount, back.RetryCount)
			assert.Equal(t, tc.f.Raw, back.Raw)
			assert.Equal(t, tc.wantTS.UnixMilli(), back.Timestamp.UnixMilli())
			assert.Equal(t, failed.UnixMilli(), back.FailedAt.UnixMilli())
			uuid, md, payload, err := codec.Decode(stored(r.Fields()))
			require.NoError(t, err)
			assert.Equal(t, tc.f.UUID, uuid)
			assert.Equal(t, tc.wantMD, md)
			assert.Equal(t, string(tc.f.Payload), payload)
			var headers map[string]string
			require.NoError(t, json.Unmarshal([]byte(back.Headers), &headers))
			assert.Equal(t, tc.wantMD, headers)
		})
	}
	in := map[string]string{codec.HeaderRetryGroup: "g"}
	_, err := NewRecord(Failure{UUID: "u", Metadata: in, Reason: "r"})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{codec.HeaderRetryGroup: "g"}, in, "the caller's metadata is not changed")
	_, err = NewRecord(Failure{UUID: "u", Metadata: map[string]string{codec.UUIDField: "x"}, Reason: "r"})
	assert.True(t, errors.Is(err, codec.ErrReserved))
	_, err = NewRecord(Failure{Reason: "r"})
	assert.ErrorIs(t, err, ErrNoUUID)
}

// FuzzNewRecord: whatever a message carries, its dead letter is either refused (a reserved
// metadata key) or reads back whole: the record by DecodeRecord, the message by codec.Decode.
func FuzzNewRecord(f *testing.F) {
	f.Add("uuid", "k", "v", "payload", "1-1", "reason", 2)
	f.Add("", "", "", "", "", "", 0)
	f.Add("u", codec.UUIDField, "x", "p", "bad id", "r", -1)
	f.Add("u", codec.HeaderRetryGroup, "g", "p", "9-9", "r\nwith\x00bytes", 1)
	f.Fuzz(func(t *testing.T, uuid, key, value, body, id, reason string, retries int) {
		r, err := NewRecord(Failure{UUID: uuid, Metadata: map[string]string{key: value}, Payload: []byte(body),
			StreamID: id, OriginalID: id, Reason: reason, RetryCount: retries})
		if err != nil {
			if !errors.Is(err, codec.ErrReserved) && (uuid != "" || !errors.Is(err, ErrNoUUID)) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		back := DecodeRecord(stored(r.Fields()))
		if back.Reason != reason || back.OriginalMessageID != id || back.RetryCount != retries {
			t.Fatalf("record did not read back: %+v", back)
		}
		gotUUID, md, payload, err := codec.Decode(stored(r.Fields()))
		if err != nil || gotUUID != uuid || payload != body || md[codec.HeaderDeadLetter] != reason {
			t.Fatalf("message did not read back: %q %v %q %v", gotUUID, md, payload, err)
		}
	})
}
