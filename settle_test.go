package streamq

import (
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/components/delay"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/codec"
)

// TestDecide covers the one place that turns a delivery's outcome into a verdict: every
// verdict, the retry cap from config, policy and metadata, DelayOnError's delay, the
// direct-retry threshold and the due time of a parked retry, on a fake clock.
func TestDecide(t *testing.T) {
	t.Parallel()
	now := clock.NewFake(time.Unix(1_700_000_000, 0)).Now()
	policy := ExponentialBackoff{Base: time.Second, Max: time.Minute}
	rules := RetryConfig{Policy: policy, MaxRetries: 3, MaxSnoozes: 2}
	detect := rules
	detect.Outage.After = 3
	topic, dlq := rulesFor(false), rulesFor(true)
	tests := []struct {
		name  string
		rules topicRules
		pol   RetryConfig
		out   outcome
		md    message.Metadata
		run   failureRun
		want  decision
	}{
		{name: "ack", rules: topic, pol: rules, out: acked, want: decision{verdict: ackIt}},
		{name: "stopped stays pending", rules: topic, pol: rules, out: stopped, want: decision{verdict: leavePending}},
		{name: "replay mark on a topic is a plain ack", rules: topic, pol: rules, out: acked, md: md(ReplayMetadata, "true"), want: decision{verdict: ackIt}},
		{name: "replay mark on a DLQ replays", rules: dlq, pol: rules, out: acked, md: md(ReplayMetadata, "true"), want: decision{verdict: replayIt}},
		{name: "a replay to every group", rules: dlq, pol: rules, out: acked, md: md(ReplayMetadata, replayAllGroups), want: decision{verdict: replayIt, all: true}},
		{name: "first nack parks the retry a second out", rules: topic, pol: rules, out: nacked,
			want: decision{verdict: retryLater, reason: "nacked", retries: 1, due: now.Add(time.Second)}},
		{name: "second nack backs off twice as long", rules: topic, pol: rules, out: nacked, md: md(RetryCountMetadata, "1", LastErrorMetadata, "boom"),
			want: decision{verdict: retryLater, reason: "boom", retries: 2, due: now.Add(2 * time.Second)}},
		{name: "Retry.MaxRetries exhausted", rules: topic, pol: rules, out: nacked, md: md(RetryCountMetadata, "3", LastErrorMetadata, "boom"),
			want: decision{verdict: deadLetter, reason: "retries exhausted (3): boom", retries: 3}},
		{name: "message cap below config", rules: topic, pol: rules, out: nacked, md: md(RetryCountMetadata, "1", MaxRetriesMetadata, "1"),
			want: decision{verdict: deadLetter, reason: "retries exhausted (1): nacked", retries: 1}},
		{name: "message cap above config", rules: topic, pol: rules, out: nacked, md: md(RetryCountMetadata, "3", MaxRetriesMetadata, "5"),
			want: decision{verdict: retryLater, reason: "nacked", retries: 4, due: now.Add(8 * time.Second)}},
		{name: "message cap 0: first nack dead-letters", rules: topic, pol: rules, out: nacked, md: md(MaxRetriesMetadata, "0"),
			want: decision{verdict: deadLetter, reason: "retries exhausted (0): nacked"}},
		{name: "for ever", rules: topic, pol: RetryConfig{Policy: policy, MaxRetries: -1}, out: nacked, md: md(RetryCountMetadata, "99"),
			want: decision{verdict: retryLater, reason: "nacked", retries: 100, due: now.Add(time.Minute)}},
		{name: "asked dead letter skips retries", rules: topic, pol: rules, out: nacked, md: md(DeadLetterMetadata, "invalid", RetryCountMetadata, "1"),
			want: decision{verdict: deadLetter, reason: "invalid", retries: 1}},
		{name: "zero backoff retries at once", rules: topic, pol: RetryConfig{Policy: ExponentialBackoff{}, MaxRetries: 3}, out: nacked,
			want: decision{verdict: retryNow, reason: "nacked", retries: 1}},
		{name: "DelayOnError's delay wins over the policy", rules: topic, pol: rules, out: nacked,
			md:   md(delay.DelayedUntilKey, "x", delay.DelayedForKey, "10s"),
			want: decision{verdict: retryLater, reason: "nacked", retries: 1, due: now.Add(10 * time.Second)}},
		{name: "a short DelayOnError delay retries at once", rules: topic, pol: rules, out: nacked,
			md:   md(delay.DelayedUntilKey, "x", delay.DelayedForKey, "10ms"),
			want: decision{verdict: retryNow, reason: "nacked", retries: 1}},
		{name: "a bad DelayOnError delay falls back to the policy", rules: topic, pol: rules, out: nacked,
			md:   md(delay.DelayedUntilKey, "x", delay.DelayedForKey, "soon"),
			want: decision{verdict: retryLater, reason: "nacked", retries: 1, due: now.Add(time.Second)}},
		{name: "a DLQ nack is delivered again after the backoff", rules: dlq, pol: rules, out: nacked, md: md(RetryCountMetadata, "2"),
			want: decision{verdict: redeliver, wait: 4 * time.Second}},
		{name: "a DLQ letter's own reason is no request: nack redelivers", rules: dlq, pol: rules, out: nacked, md: md(DeadLetterMetadata, "again"),
			want: decision{verdict: redeliver, wait: time.Second}},
		{name: "drop mark on a DLQ drops when acked", rules: dlq, pol: rules, out: acked, md: md(DropMetadata, "true"),
			want: decision{verdict: dropIt}},
		{name: "drop mark on a DLQ drops when nacked (DeadLetter on a dead letter)", rules: dlq, pol: rules, out: nacked,
			md: md(DropMetadata, "true", DeadLetterMetadata, "again"), want: decision{verdict: dropIt}},
		{name: "replay and drop marks on a DLQ replay, then delete", rules: dlq, pol: rules, out: acked,
			md: md(ReplayMetadata, "true", DropMetadata, "true"), want: decision{verdict: replayIt, drop: true}},
		{name: "replay mark on a nacked DLQ letter redelivers", rules: dlq, pol: rules, out: nacked, md: md(ReplayMetadata, "true"),
			want: decision{verdict: redeliver, wait: time.Second}},
		{name: "drop mark stopped stays pending", rules: dlq, pol: rules, out: stopped, md: md(DropMetadata, "true"),
			want: decision{verdict: leavePending}},
		{name: "drop mark on a topic is a plain ack", rules: topic, pol: rules, out: acked, md: md(DropMetadata, "true"), want: decision{verdict: ackIt}},
		{name: "drop mark on a topic nack retries", rules: topic, pol: rules, out: nacked, md: md(DropMetadata, "true"),
			want: decision{verdict: retryLater, reason: "nacked", retries: 1, due: now.Add(time.Second)}},
		{name: "a snooze parks the message with its retries unchanged", rules: topic, pol: rules, out: nacked,
			md:   md(codec.HeaderSnooze, "30s", RetryCountMetadata, "1"),
			want: decision{verdict: retryLater, retries: 1, snoozes: 1, due: now.Add(30 * time.Second)}},
		{name: "a short snooze is appended at once", rules: topic, pol: rules, out: nacked, md: md(codec.HeaderSnooze, "0s"),
			want: decision{verdict: retryNow, snoozes: 1}},
		{name: "a snooze beyond MaxSnoozes is a failure", rules: topic, pol: rules, out: nacked,
			md:   md(codec.HeaderSnooze, "30s", codec.HeaderSnoozeCount, "2"),
			want: decision{verdict: retryLater, reason: "snoozed more than 2 times", retries: 1, due: now.Add(time.Second)}},
		{name: "a snooze on the last retry is no failure", rules: topic, pol: rules, out: nacked,
			md:   md(codec.HeaderSnooze, "1m", RetryCountMetadata, "3"),
			want: decision{verdict: retryLater, retries: 3, snoozes: 1, due: now.Add(time.Minute)}},
		{name: "an outage holds the message, whatever its retries", rules: topic, pol: rules, out: nacked,
			md:   md(codec.HeaderOutage, "payments down", RetryCountMetadata, "3"),
			want: decision{verdict: waitOutage, reason: "payments down"}},
		{name: "an outage on a DLQ redelivers as any nack", rules: dlq, pol: rules, out: nacked, md: md(codec.HeaderOutage, "down"),
			want: decision{verdict: redeliver, wait: time.Second}},
		{name: "DeadLetter beats an outage", rules: topic, pol: rules, out: nacked, md: md(codec.HeaderOutage, "down", DeadLetterMetadata, "bad"),
			want: decision{verdict: deadLetter, reason: "bad"}},
		{name: "failures in a row below After retry", rules: topic, pol: detect, out: nacked, md: md(LastErrorMetadata, "boom"), run: failureRun{inARow: 1},
			want: decision{verdict: retryLater, reason: "boom", retries: 1, due: now.Add(time.Second)}},
		{name: "the After-th failure in a row is an outage", rules: topic, pol: detect, out: nacked, md: md(LastErrorMetadata, "boom"), run: failureRun{inARow: 2},
			want: decision{verdict: waitOutage, reason: "boom"}},
		{name: "an ack after failures in a row is an ack", rules: topic, pol: detect, out: acked, run: failureRun{inARow: 9},
			want: decision{verdict: ackIt}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := message.NewMessage("id", nil)
			for k, v := range tt.md {
				m.Metadata.Set(k, v)
			}
			if got := decide(now, tt.rules, tt.pol, tt.out, m, tt.run); got != tt.want {
				t.Fatalf("decide = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func md(kv ...string) message.Metadata {
	out := message.Metadata{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// TestNextMove covers when the mover looks at its sets again: the earliest due item or
// asked-for time, never later than the interval after the step started, never sooner than
// 1 ms, measured from the step's end.
func TestNextMove(t *testing.T) {
	t.Parallel()
	c := clock.NewFake(time.Unix(1_700_000_000, 0))
	start := c.Now()
	c.Advance(5 * time.Millisecond)
	end := c.Now()
	const maxWait = time.Second
	var none time.Time
	tests := []struct {
		name  string
		asked time.Time
		dues  []time.Time
		want  time.Duration
	}{
		{name: "empty sets sleep the interval from the start", asked: none, want: maxWait - 5*time.Millisecond},
		{name: "a due item wakes it then", dues: []time.Time{start.Add(300 * time.Millisecond)}, want: 295 * time.Millisecond},
		{name: "the earlier of two sets", dues: []time.Time{start.Add(800 * time.Millisecond), start.Add(100 * time.Millisecond)}, want: 95 * time.Millisecond},
		{name: "a scheduled retry asks for sooner", asked: start.Add(50 * time.Millisecond), dues: []time.Time{start.Add(800 * time.Millisecond)}, want: 45 * time.Millisecond},
		{name: "a due time past the interval is capped", dues: []time.Time{start.Add(time.Hour)}, want: maxWait - 5*time.Millisecond},
		{name: "more due now: 1 ms", dues: []time.Time{start}, want: time.Millisecond},
		{name: "zero times are none", dues: []time.Time{none, none}, want: maxWait - 5*time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nextMove(start, end, maxWait, tt.asked, tt.dues...); got != tt.want {
				t.Fatalf("nextMove = %v, want %v", got, tt.want)
			}
		})
	}
}
