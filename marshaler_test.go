package streamq_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill-redisstream/pkg/redisstream"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// asRedisEntry converts XADD values the way a Redis round trip does: go-redis writes a
// string or []byte as its bytes and nil as an empty bulk string, and XREAD returns every
// value as a string.
func asRedisEntry(t testing.TB, values map[string]any) map[string]any {
	t.Helper()
	out := make(map[string]any, len(values))
	for k, v := range values {
		switch v := v.(type) {
		case string:
			out[k] = v
		case []byte:
			out[k] = string(v)
		case nil:
			out[k] = ""
		default:
			t.Fatalf("field %q: unexpected value type %T", k, v)
		}
	}
	return out
}

// assertSameMessage compares UUID, payload and metadata; a nil and an empty metadata map
// are the same (an entry cannot tell them apart).
func assertSameMessage(t testing.TB, want, got *message.Message) {
	t.Helper()
	assert.Equal(t, want.UUID, got.UUID)
	assert.True(t, bytes.Equal(want.Payload, got.Payload), "payload %q, want %q", got.Payload, want.Payload)
	if len(want.Metadata) == 0 {
		assert.Empty(t, got.Metadata)
	} else {
		assert.Equal(t, want.Metadata, got.Metadata)
	}
}

func allBytes() []byte {
	b := make([]byte, 0, 256+4)
	for i := range 256 {
		b = append(b, byte(i))
	}
	return append(b, 0, 0, 0, 0)
}

func newMsg(uuid string, payload []byte, md message.Metadata) *message.Message {
	msg := message.NewMessage(uuid, payload)
	msg.Metadata = md
	return msg
}

var marshalerCases = []struct {
	name  string
	input *message.Message
}{
	{name: "empty payload", input: newMsg("u-empty", []byte{}, message.Metadata{"k": "v"})},
	{name: "nil payload", input: newMsg("u-nil-payload", nil, nil)},
	{name: "all byte values and NULs", input: newMsg("u-binary", allBytes(), message.Metadata{"bin": "\x00\xff\x00"})},
	{name: "only NULs", input: newMsg("u-nuls", []byte{0, 0, 0}, nil)},
	{name: "nil metadata", input: newMsg("u-nil-md", []byte("hello"), nil)},
	{name: "empty metadata", input: newMsg("u-empty-md", []byte("hello"), message.Metadata{})},
	{name: "unicode and empty metadata values", input: newMsg("u-unicode", []byte("ünïcödé ✓"), message.Metadata{
		"ключ":          "значение",
		"emoji 🔑":       "🚀🚀",
		"empty":         "",
		"":              "empty key",
		"partition_key": "用户-42",
	})},
	{name: "long metadata value", input: newMsg("u-long", []byte("x"), message.Metadata{"long": string(bytes.Repeat([]byte("ab"), 40_000))})},
}

func TestMarshalerRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tt := range marshalerCases {
		t.Run(tt.name, func(t *testing.T) {
			values, err := streamq.DefaultMarshaler{}.Marshal("topic", tt.input)
			require.NoError(t, err)
			assert.ElementsMatch(t, []string{streamq.UUIDField, streamq.MetadataField, streamq.PayloadField}, keysOf(values))

			for name, decode := range decoders {
				got, err := decode(asRedisEntry(t, values))
				require.NoError(t, err, name)
				assertSameMessage(t, tt.input, got)
				assert.NotPanics(t, func() { got.Metadata.Set("added", "later") }, "metadata must be a usable map")
			}
		})
	}
}

// decoders are DefaultMarshaler.Unmarshal and the worker's copy-free variant of it, which
// must read every entry the same way.
var decoders = map[string]func(map[string]any) (*message.Message, error){
	"DefaultMarshaler.Unmarshal": streamq.DefaultMarshaler{}.Unmarshal,
	"unmarshalReply":             streamq.UnmarshalReply,
}

// The copy-free decoder's payload is the reply's bytes: an empty payload is still a non-nil
// empty slice, as with the copying decoder.
func TestUnmarshalReplyPayload(t *testing.T) {
	t.Parallel()
	payload := string([]byte("reply bytes")) // a heap string, as go-redis returns
	msg, err := streamq.UnmarshalReply(map[string]any{streamq.UUIDField: "u", streamq.PayloadField: payload})
	require.NoError(t, err)
	assert.Equal(t, []byte("reply bytes"), []byte(msg.Payload))
	empty, err := streamq.UnmarshalReply(map[string]any{streamq.UUIDField: "u", streamq.PayloadField: ""})
	require.NoError(t, err)
	assert.NotNil(t, empty.Payload)
	assert.Empty(t, empty.Payload)
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestMarshalerRejectsReservedMetadataKey(t *testing.T) {
	t.Parallel()
	msg := newMsg("u", []byte("p"), message.Metadata{streamq.UUIDField: "other-uuid"})
	_, err := streamq.DefaultMarshaler{}.Marshal("topic", msg)
	require.ErrorIs(t, err, streamq.ErrReservedMetadata)
}

func mustMsgpack(t testing.TB, v any) string {
	t.Helper()
	b, err := msgpack.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestUnmarshalRejectsMalformedEntries(t *testing.T) {
	t.Parallel()
	validMD := mustMsgpack(t, map[string]string{"k": "v"})
	tests := []struct {
		name  string
		input map[string]any
		want  error
	}{
		{name: "missing uuid", input: map[string]any{streamq.PayloadField: "p", streamq.MetadataField: validMD}, want: streamq.ErrMalformedEntry},
		{name: "empty uuid", input: map[string]any{streamq.UUIDField: "", streamq.PayloadField: "p"}, want: streamq.ErrMalformedEntry},
		{name: "uuid not a string", input: map[string]any{streamq.UUIDField: []byte("u"), streamq.PayloadField: "p"}, want: streamq.ErrMalformedEntry},
		{name: "missing payload", input: map[string]any{streamq.UUIDField: "u", streamq.MetadataField: validMD}, want: streamq.ErrMalformedEntry},
		{name: "no fields", input: map[string]any{}, want: streamq.ErrMalformedEntry},
		{name: "nil map", input: nil, want: streamq.ErrMalformedEntry},
		{name: "metadata not msgpack", input: map[string]any{streamq.UUIDField: "u", streamq.PayloadField: "p", streamq.MetadataField: "not msgpack"}, want: streamq.ErrMalformedEntry},
		{name: "metadata msgpack array", input: map[string]any{streamq.UUIDField: "u", streamq.PayloadField: "p", streamq.MetadataField: mustMsgpack(t, []string{"k", "v"})}, want: streamq.ErrMalformedEntry},
		{name: "metadata msgpack string", input: map[string]any{streamq.UUIDField: "u", streamq.PayloadField: "p", streamq.MetadataField: mustMsgpack(t, "k=v")}, want: streamq.ErrMalformedEntry},
		{name: "metadata map of ints", input: map[string]any{streamq.UUIDField: "u", streamq.PayloadField: "p", streamq.MetadataField: mustMsgpack(t, map[string]int{"k": 1})}, want: streamq.ErrMalformedEntry},
		{name: "metadata truncated", input: map[string]any{streamq.UUIDField: "u", streamq.PayloadField: "p", streamq.MetadataField: validMD[:len(validMD)-1]}, want: streamq.ErrMalformedEntry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, decode := range decoders {
				msg, err := decode(tt.input)
				require.ErrorIs(t, err, tt.want, name)
				assert.Nil(t, msg)
			}
		})
	}
}

// TestMalformedEntryDeadLetteredAndCounted: entries a Subscriber cannot decode (a field
// missing, metadata that is not msgpack) go to the partition's DLQ with the reason and the raw
// fields, are counted in Stats and logged once each, and the subscription goes on.
func TestMalformedEntryDeadLetteredAndCounted(t *testing.T) {
	_, client := streamqtest.StartRedis(t)
	ctx := context.Background()
	logger := watermill.NewCaptureLogger()
	sub, err := streamq.NewSubscriber(streamqtest.FastSub(client, "g"), logger)
	require.NoError(t, err)
	defer sub.Close()
	topic := "malformed"
	require.NoError(t, sub.SubscribeInitialize(topic))
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	stream := keys.New("", "").PartitionStream(topic, 0)

	publish := func(i int) {
		m := message.NewMessage(watermill.NewUUID(), []byte(strconv.Itoa(i)))
		require.NoError(t, pub.Publish(topic, m))
	}
	publish(0)
	require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: map[string]any{"only": "one field"}}).Err())
	require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: map[string]any{streamq.UUIDField: "u", streamq.PayloadField: "p", streamq.MetadataField: "\xc1garbage"}}).Err())
	publish(1)

	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	for i := 0; i < 2; i++ {
		msg := <-ch
		assert.Equal(t, strconv.Itoa(i), string(msg.Payload))
		msg.Ack()
	}
	publish(2)
	select {
	case msg := <-ch:
		assert.Equal(t, "2", string(msg.Payload), "subscription still open after bad entries")
		msg.Ack()
	case <-time.After(10 * time.Second):
		t.Fatal("subscription stuck after malformed entries")
	}
	assert.Equal(t, int64(2), sub.Stats().Malformed)
	dead, err := client.XRange(ctx, keys.New("", "").DLQ(topic, 0), "-", "+").Result()
	require.NoError(t, err)
	require.Len(t, dead, 2, "both bad entries are in the partition's DLQ")
	assert.Contains(t, dead[0].Values["reason"], "malformed entry")
	assert.Contains(t, dead[0].Values["raw"], "one field")
	assert.Equal(t, "0", dead[0].Values["partitionId"])
	logged := 0
	for _, c := range logger.Captured()[watermill.ErrorLogLevel] {
		if errors.Is(c.Err, streamq.ErrMalformedEntry) {
			logged++
		}
	}
	assert.Equal(t, 2, logged, "each malformed entry logged once")
	require.Eventually(t, func() bool {
		p, err := client.XPending(ctx, stream, "g").Result()
		return err == nil && p.Count == 0
	}, 5*time.Second, 20*time.Millisecond, "bad entries are acked, not left pending")
}

// TestUnmarshalMsgpackNilMetadata: a metadata field holding msgpack nil (0xc0) must decode to
// empty, usable metadata (a nil map would make msg.Metadata.Set panic in a handler).
func TestUnmarshalMsgpackNilMetadata(t *testing.T) {
	t.Parallel()
	msg, err := streamq.DefaultMarshaler{}.Unmarshal(map[string]any{streamq.UUIDField: "u", streamq.PayloadField: "p", streamq.MetadataField: "\xc0"})
	require.NoError(t, err)
	assert.NotNil(t, msg.Metadata)
	assert.NotPanics(t, func() { msg.Metadata.Set("k", "v") })
}

// The real watermill-redisstream marshaller (pkg/redisstream/marshaller.go, v1.4.5): entries
// written by either side must be read by the other.
func TestUnmarshalReadsWatermillRedisstreamEntries(t *testing.T) {
	t.Parallel()
	for _, tt := range marshalerCases {
		t.Run(tt.name, func(t *testing.T) {
			values, err := redisstream.DefaultMarshallerUnmarshaller{}.Marshal("topic", tt.input)
			require.NoError(t, err)
			got, err := streamq.DefaultMarshaler{}.Unmarshal(asRedisEntry(t, values))
			require.NoError(t, err)
			assertSameMessage(t, tt.input, got)
		})
	}
}

func TestMarshalerOutputReadByWatermillRedisstream(t *testing.T) {
	t.Parallel()
	for _, tt := range marshalerCases {
		t.Run(tt.name, func(t *testing.T) {
			values, err := streamq.DefaultMarshaler{}.Marshal("topic", tt.input)
			require.NoError(t, err)
			got, err := redisstream.DefaultMarshallerUnmarshaller{}.Unmarshal(asRedisEntry(t, values))
			require.NoError(t, err)
			assertSameMessage(t, tt.input, got)
		})
	}
}

func TestMarshalerSameFieldsAsWatermillRedisstream(t *testing.T) {
	t.Parallel()
	msg := newMsg("u", []byte("payload"), message.Metadata{"one": "1"})
	ours, err := streamq.DefaultMarshaler{}.Marshal("topic", msg)
	require.NoError(t, err)
	theirs, err := redisstream.DefaultMarshallerUnmarshaller{}.Marshal("topic", msg)
	require.NoError(t, err)
	// One metadata key, so map order cannot differ: the entries are byte-identical.
	assert.Equal(t, asRedisEntry(t, theirs), asRedisEntry(t, ours))
	assert.Equal(t, redisstream.UUIDHeaderKey, streamq.UUIDField)
}

// FuzzUnmarshal feeds arbitrary entries to Unmarshal: it must never panic, must fail only
// with ErrMalformedEntry, and whatever it accepts must survive Marshal and Unmarshal again.
// fields is a bit set of the fields present: 1 uuid, 2 payload, 4 metadata.
func FuzzUnmarshal(f *testing.F) {
	valid, err := msgpack.Marshal(map[string]string{"k": "v", "partition_key": "42"})
	require.NoError(f, err)
	array, err := msgpack.Marshal([]string{"k", "v"})
	require.NoError(f, err)
	f.Add("uuid-1", "payload", string(valid), uint8(7))
	f.Add("uuid-2", "", "", uint8(7))
	f.Add("uuid-3", "\x00\xff\x00", "\x80", uint8(7))
	f.Add("uuid-4", "p", "garbage \xff\xfe", uint8(7))
	f.Add("uuid-5", "p", string(array), uint8(7))
	f.Add("uuid-6", "p", "\xc0", uint8(7))
	f.Add("uuid-7", "p", "\x81\xa1k", uint8(7))
	f.Add("uuid-8", "p", "\x81\xb7_watermill_message_uuid\xa1x", uint8(7))
	f.Add("", "p", "", uint8(7))
	f.Add("uuid-9", "p", string(valid), uint8(1))
	f.Add("uuid-10", "p", string(valid), uint8(6))
	f.Add("uuid-11", "p", string(valid), uint8(3))
	f.Add("uuid-12", "p", "", uint8(0))

	f.Fuzz(func(t *testing.T, uuid, payload, metadata string, fields uint8) {
		values := map[string]any{}
		if fields&1 != 0 {
			values[streamq.UUIDField] = uuid
		}
		if fields&2 != 0 {
			values[streamq.PayloadField] = payload
		}
		if fields&4 != 0 {
			values[streamq.MetadataField] = metadata
		}
		msg, err := streamq.DefaultMarshaler{}.Unmarshal(values)
		owned, ownedErr := streamq.UnmarshalReply(values)
		if err != nil {
			require.ErrorIs(t, err, streamq.ErrMalformedEntry)
			require.Nil(t, msg)
			require.ErrorIs(t, ownedErr, streamq.ErrMalformedEntry, "the copy-free decoder agrees")
			return
		}
		require.NoError(t, ownedErr, "the copy-free decoder agrees")
		assertSameMessage(t, msg, owned)
		require.Equal(t, uuid, msg.UUID)
		require.Equal(t, payload, string(msg.Payload))

		out, err := streamq.DefaultMarshaler{}.Marshal("topic", msg)
		if msg.Metadata.Get(streamq.UUIDField) != "" {
			// Accepted on read but reserved on write, as in watermill-redisstream.
			require.ErrorIs(t, err, streamq.ErrReservedMetadata)
			return
		}
		require.NoError(t, err)
		back, err := streamq.DefaultMarshaler{}.Unmarshal(asRedisEntry(t, out))
		require.NoError(t, err)
		assertSameMessage(t, msg, back)
	})
}

func benchMessage() *message.Message {
	return newMsg("0d7b4a56-6e2f-4d0e-9a53-7f1c2b9e4a10", bytes.Repeat([]byte{0xab}, 64),
		message.Metadata{"partition_key": "customer-1234", "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"})
}

func BenchmarkMarshal(b *testing.B) {
	msg := benchMessage()
	var m streamq.DefaultMarshaler
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Marshal("topic", msg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshal(b *testing.B) {
	values, err := streamq.DefaultMarshaler{}.Marshal("topic", benchMessage())
	require.NoError(b, err)
	entry := asRedisEntry(b, values)
	var m streamq.DefaultMarshaler
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Unmarshal(entry); err != nil {
			b.Fatal(err)
		}
	}
}
