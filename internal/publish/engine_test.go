package publish

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/components/delay"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/payload"
)

// unusedClient is a client that is never connected: building an engine sends nothing.
func unusedClient(t *testing.T) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestEngineTrimsUnderLengthRetentionOnly: an engine without length retention (MaxLen -1)
// runs no trimmer and records -1 in the topics it registers; with MaxLen it trims a
// partition every hundredth of MaxLen appends (at most 1000) and records MaxLen, the
// exactness and the policy.
func TestEngineTrimsUnderLengthRetentionOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		trim     Trim
		every    int64 // 0: no trimmer
		settings []string
	}{
		{"off", Trim{MaxLen: -1}, 0,
			[]string{partition.FieldMaxLen, "-1", partition.FieldExactLen, "0", partition.FieldTrimPolicy, "acked"}},
		{"approximate, acked", Trim{MaxLen: 500}, 5,
			[]string{partition.FieldMaxLen, "500", partition.FieldExactLen, "0", partition.FieldTrimPolicy, "acked"}},
		{"exact, hard", Trim{MaxLen: 1_000_000, Exact: true, Hard: true}, 1000,
			[]string{partition.FieldMaxLen, "1000000", partition.FieldExactLen, "1", partition.FieldTrimPolicy, "hard"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newTestEngine(t, unusedClient(t), func(c *Config) { c.Trim = tt.trim })
			assert.Equal(t, tt.settings, e.topics.Settings)
			if tt.every == 0 {
				assert.Nil(t, e.trims, "no length retention, no trimmer")
				return
			}
			require.NotNil(t, e.trims)
			assert.Equal(t, tt.every, e.trims.every)
			assert.Equal(t, tt.trim.MaxLen, e.trims.rule.MaxLen)
		})
	}
}

// TestXAddCommand: the append is one XADD of the entry's fields with an automatic id and no
// trim (retention runs in the background): the default format's fields in place when
// Marshal is nil, else the fields of Marshal's map; Marshal's error is the write's.
func TestXAddCommand(t *testing.T) {
	t.Parallel()
	msg := message.NewMessage("u-1", []byte("body"))
	msg.Metadata.Set("k", "v")

	e, _ := newTestEngine(t, unusedClient(t), nil)
	args, err := e.xaddCommand("t", "s", msg)
	require.NoError(t, err)
	want, err := codec.AppendArgs([]any{"xadd", "s", "*"}, msg.UUID, msg.Metadata, msg.Payload)
	require.NoError(t, err)
	assert.Equal(t, want, args, "the default format, appended in place")

	custom, _ := newTestEngine(t, unusedClient(t), func(c *Config) {
		c.Marshal = func(topic string, m *message.Message) (map[string]any, error) {
			return map[string]any{"id": m.UUID, "topic": topic}, nil
		}
	})
	args, err = custom.xaddCommand("t", "s", msg)
	require.NoError(t, err)
	require.Len(t, args, 7)
	assert.Equal(t, []any{"xadd", "s", "*"}, args[:3], "the append never trims")
	assert.ElementsMatch(t, [][2]any{{"id", "u-1"}, {"topic", "t"}}, [][2]any{{args[3], args[4]}, {args[5], args[6]}})

	refused := errors.New("refused")
	failing, _ := newTestEngine(t, unusedClient(t), func(c *Config) {
		c.Marshal = func(string, *message.Message) (map[string]any, error) { return nil, refused }
	})
	_, err = failing.xaddCommand("t", "s", msg)
	assert.ErrorIs(t, err, refused)
}

// TestDelayedUntil: Watermill's delay metadata parks a message until the later of "until"
// and now + "for"; a message due within retry.DirectThreshold, or whose metadata does not
// parse, is appended at once.
func TestDelayedUntil(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		until     string // delay.DelayedUntilKey
		forD      string // delay.DelayedForKey
		wantDue   time.Time
		wantDelay bool
	}{
		{name: "none"},
		{name: "until later", until: now.Add(time.Minute).Format(time.RFC3339Nano), wantDue: now.Add(time.Minute), wantDelay: true},
		{name: "for", forD: "90s", wantDue: now.Add(90 * time.Second), wantDelay: true},
		{name: "for beyond a whole-second until", until: now.Add(time.Second).Format(time.RFC3339Nano), forD: "1500ms",
			wantDue: now.Add(1500 * time.Millisecond), wantDelay: true},
		{name: "until beyond for", until: now.Add(time.Hour).Format(time.RFC3339Nano), forD: "1m",
			wantDue: now.Add(time.Hour), wantDelay: true},
		{name: "until passed", until: now.Add(-time.Minute).Format(time.RFC3339Nano), wantDue: now.Add(-time.Minute)},
		{name: "within the direct threshold", forD: "50ms", wantDue: now.Add(50 * time.Millisecond)},
		{name: "just beyond it", forD: "51ms", wantDue: now.Add(51 * time.Millisecond), wantDelay: true},
		{name: "unparsable", until: "tomorrow", forD: "a while"},
	}
	e, _ := newTestEngine(t, unusedClient(t), func(c *Config) { c.Clock = clock.NewFake(now) })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := message.NewMessage("u", nil)
			if tt.until != "" {
				msg.Metadata.Set(delay.DelayedUntilKey, tt.until)
			}
			if tt.forD != "" {
				msg.Metadata.Set(delay.DelayedForKey, tt.forD)
			}
			due, delayed := e.delayedUntil(msg)
			assert.True(t, tt.wantDue.Equal(due), "due %s, want %s", due, tt.wantDue)
			assert.Equal(t, tt.wantDelay, delayed)
		})
	}
}

// TestWritesByKind: each message becomes one write to the partition Route picks: an append
// (sequenced by default, once by UUID under ByUUID or for a derived UUID, plain when
// idempotency is off), an offloaded append over the threshold, or a parking when due later
// (never offloaded: the delay set keeps the whole message). A Route error is the Publish's.
func TestWritesByKind(t *testing.T) {
	t.Parallel()
	plain := message.NewMessage("plain", []byte("small"))
	derived := message.NewMessage("derived#0", []byte("small"))
	derived.Metadata.Set(codec.HeaderDerivedFrom, "derived")
	large := message.NewMessage("large", make([]byte, 100))
	delayed := message.NewMessage("delayed", make([]byte, 100))
	delayed.Metadata.Set(delay.DelayedForKey, "1m")
	msgs := []*message.Message{plain, derived, large, delayed}

	for _, tt := range []struct {
		name string
		idem Idempotency
		want []string // per message: its write's kind and idempotence
	}{
		{"by producer", Idempotency{Window: window}, []string{"xadd seq", "xadd once", "offload seq", "park"}},
		{"by UUID", Idempotency{Window: window, ByUUID: true}, []string{"xadd once", "xadd once", "offload once", "park"}},
		{"off", Idempotency{}, []string{"xadd", "xadd", "offload", "park"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newTestEngine(t, unusedClient(t), func(c *Config) {
				c.Idempotency, c.OffloadThreshold = tt.idem, 64
				c.Route = func(string, int, *message.Message) (int, error) { return 2, nil }
			})
			writes, err := e.writes("t", 4, msgs)
			require.NoError(t, err)
			var got []string
			for _, w := range writes {
				assert.Equal(t, 2, w.Partition)
				got = append(got, kindOf(w))
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, space.PartitionStream("t", 2), writes[0].XAdd[1])
			assert.Equal(t, space.PartitionStream("t", 2), writes[2].Offload.Stream)
			assert.Equal(t, space.Delay("t", 2), writes[3].Park.ZSet)
			assert.Equal(t, "2", writes[3].Park.Item.PartitionID)
		})
	}

	routeErr := errors.New("no partition")
	e, _ := newTestEngine(t, unusedClient(t), func(c *Config) {
		c.Route = func(string, int, *message.Message) (int, error) { return 0, routeErr }
	})
	_, err := e.writes("t", 4, msgs)
	assert.ErrorIs(t, err, routeErr)
}

// kindOf names a write's kind (xadd, offload, park) and the idempotence of an append (seq,
// once; a parking is sent as it is, whatever its write carries).
func kindOf(w Write) string {
	kind := "xadd"
	switch {
	case w.Park != nil:
		return "park"
	case w.Offload != nil:
		kind = "offload"
	}
	switch {
	case w.Seq != nil:
		kind += " seq"
	case w.Once != nil:
		kind += " once"
	}
	return kind
}

// TestBatcherVerdict: a pipeline's WAIT verdict is nil without replicas to wait for or when
// enough confirmed; else Errors.NotReplicated of the wait, the count and WAIT's error.
func TestBatcherVerdict(t *testing.T) {
	t.Parallel()
	waitFailed := errors.New("i/o timeout")
	want := Replicas{N: 2, Timeout: time.Second}
	for _, tt := range []struct {
		name  string
		wait  Replicas
		acked int
		err   error
		want  *testReplicationError // nil: no error
	}{
		{name: "off", wait: Replicas{}, acked: 0},
		{name: "off, whatever WAIT said", wait: Replicas{}, err: waitFailed},
		{name: "enough", wait: want, acked: 2},
		{name: "more than enough", wait: want, acked: 3},
		{name: "too few", wait: want, acked: 1, want: &testReplicationError{want: want, acked: 1}},
		{name: "WAIT failed", wait: want, err: waitFailed, want: &testReplicationError{want: want, err: waitFailed}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := &batcher{wait: tt.wait, notReplicated: testErrors.NotReplicated}
			err := b.verdict(tt.acked, tt.err)
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.Equal(t, tt.want, err)
			assert.ErrorIs(t, err, errTestNotReplicated)
		})
	}
}

// TestFullErrorsLeaveOtherErrors: an error that is not Redis's OOM refusal is returned as it
// is, with nothing read or noted.
func TestFullErrorsLeaveOtherErrors(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t, unusedClient(t), nil)
	other := errors.New("ERR something else")
	assert.Same(t, other, e.full.of(context.Background(), "t", 0, other))
	assert.Empty(t, e.full.notes)
	assert.Empty(t, e.full.reads)
}

// TestFullErrorsNoteOnceAnInterval: a topic's refusal is noted at most once per
// fullReadEvery, each topic on its own.
func TestFullErrorsNoteOnceAnInterval(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	f := &fullErrors{clock: clk}
	assert.True(t, f.noteDue("a"), "the first refusal")
	assert.False(t, f.noteDue("a"), "again at once")
	assert.True(t, f.noteDue("b"), "another topic")
	clk.Advance(fullReadEvery - time.Millisecond)
	assert.False(t, f.noteDue("a"), "within the interval")
	clk.Advance(time.Millisecond)
	assert.True(t, f.noteDue("a"), "once the interval passed")
}

// TestOffloadArgsLeaveThePayloadOut: an offloaded write's entry is the message marshaled
// without its payload, plus the reference to the payload's key; the message keeps its payload.
func TestOffloadArgsLeaveThePayloadOut(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t, unusedClient(t), func(c *Config) { c.OffloadThreshold, c.OffloadTTL = 4, time.Minute })
	msg := message.NewMessage("u", []byte("large payload"))
	o, err := e.offloadArgs("t", 1, msg)
	require.NoError(t, err)
	assert.Equal(t, []byte("large payload"), o.Payload)
	assert.Equal(t, message.Payload("large payload"), msg.Payload, "the caller's message is left alone")
	assert.Equal(t, time.Minute, o.TTL)
	fields := map[string]any{}
	for i := 0; i+1 < len(o.Fields); i += 2 {
		fields[o.Fields[i].(string)] = o.Fields[i+1]
	}
	assert.Equal(t, o.Ref, payload.Ref(fields))
	assert.Nil(t, fields[codec.PayloadField], "no payload in the entry")
	assert.Equal(t, "u", fields[codec.UUIDField])
}
