package retry

import (
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/components/delay"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/codec"
)

// TestDecide covers the one place that turns a delivery's outcome into a Verdict: every
// verdict, the retry cap from config, policy and metadata, DelayOnError's delay, the
// direct-retry threshold and the due time of a parked retry, on a fake clock.
func TestDecide(t *testing.T) {
	t.Parallel()
	now := clock.NewFake(time.Unix(1_700_000_000, 0)).Now()
	policy := exponential{base: time.Second, max: time.Minute}
	rules := Config{Backoff: policy, MaxRetries: 3, MaxSnoozes: 2}
	detect := rules
	detect.Outage.After = 3
	topic, dlq := Rules{Retries: true}, Rules{Replays: true, Letters: true}
	tests := []struct {
		name  string
		rules Rules
		pol   Config
		out   Outcome
		md    message.Metadata
		run   Run
		want  Decision
	}{
		{name: "ack", rules: topic, pol: rules, out: Acked, want: Decision{Verdict: AckIt}},
		{name: "stopped stays pending", rules: topic, pol: rules, out: Stopped, want: Decision{Verdict: LeavePending}},
		{name: "replay mark on a topic is a plain ack", rules: topic, pol: rules, out: Acked, md: md(codec.HeaderReplay, "true"), want: Decision{Verdict: AckIt}},
		{name: "replay mark on a DLQ replays", rules: dlq, pol: rules, out: Acked, md: md(codec.HeaderReplay, "true"), want: Decision{Verdict: ReplayIt}},
		{name: "a replay to every group", rules: dlq, pol: rules, out: Acked, md: md(codec.HeaderReplay, codec.ReplayAllGroups), want: Decision{Verdict: ReplayIt, All: true}},
		{name: "first nack parks the retry a second out", rules: topic, pol: rules, out: Nacked,
			want: Decision{Verdict: RetryLater, Reason: "nacked", Retries: 1, Due: now.Add(time.Second)}},
		{name: "second nack backs off twice as long", rules: topic, pol: rules, out: Nacked, md: md(codec.HeaderRetryCount, "1", codec.HeaderLastError, "boom"),
			want: Decision{Verdict: RetryLater, Reason: "boom", Retries: 2, Due: now.Add(2 * time.Second)}},
		{name: "Retry.MaxRetries exhausted", rules: topic, pol: rules, out: Nacked, md: md(codec.HeaderRetryCount, "3", codec.HeaderLastError, "boom"),
			want: Decision{Verdict: DeadLetter, Reason: "retries exhausted (3): boom", Retries: 3}},
		{name: "message cap below config", rules: topic, pol: rules, out: Nacked, md: md(codec.HeaderRetryCount, "1", codec.HeaderMaxRetries, "1"),
			want: Decision{Verdict: DeadLetter, Reason: "retries exhausted (1): nacked", Retries: 1}},
		{name: "message cap above config", rules: topic, pol: rules, out: Nacked, md: md(codec.HeaderRetryCount, "3", codec.HeaderMaxRetries, "5"),
			want: Decision{Verdict: RetryLater, Reason: "nacked", Retries: 4, Due: now.Add(8 * time.Second)}},
		{name: "message cap 0: first nack dead-letters", rules: topic, pol: rules, out: Nacked, md: md(codec.HeaderMaxRetries, "0"),
			want: Decision{Verdict: DeadLetter, Reason: "retries exhausted (0): nacked"}},
		{name: "for ever", rules: topic, pol: Config{Backoff: policy, MaxRetries: -1}, out: Nacked, md: md(codec.HeaderRetryCount, "99"),
			want: Decision{Verdict: RetryLater, Reason: "nacked", Retries: 100, Due: now.Add(time.Minute)}},
		{name: "asked dead letter skips retries", rules: topic, pol: rules, out: Nacked, md: md(codec.HeaderDeadLetter, "invalid", codec.HeaderRetryCount, "1"),
			want: Decision{Verdict: DeadLetter, Reason: "invalid", Retries: 1}},
		{name: "zero backoff retries at once", rules: topic, pol: Config{Backoff: exponential{}, MaxRetries: 3}, out: Nacked,
			want: Decision{Verdict: RetryNow, Reason: "nacked", Retries: 1}},
		{name: "DelayOnError's delay wins over the policy", rules: topic, pol: rules, out: Nacked,
			md:   md(delay.DelayedUntilKey, "x", delay.DelayedForKey, "10s"),
			want: Decision{Verdict: RetryLater, Reason: "nacked", Retries: 1, Due: now.Add(10 * time.Second)}},
		{name: "a short DelayOnError delay retries at once", rules: topic, pol: rules, out: Nacked,
			md:   md(delay.DelayedUntilKey, "x", delay.DelayedForKey, "10ms"),
			want: Decision{Verdict: RetryNow, Reason: "nacked", Retries: 1}},
		{name: "a bad DelayOnError delay falls back to the policy", rules: topic, pol: rules, out: Nacked,
			md:   md(delay.DelayedUntilKey, "x", delay.DelayedForKey, "soon"),
			want: Decision{Verdict: RetryLater, Reason: "nacked", Retries: 1, Due: now.Add(time.Second)}},
		{name: "a DLQ nack is delivered again after the backoff", rules: dlq, pol: rules, out: Nacked, md: md(codec.HeaderRetryCount, "2"),
			want: Decision{Verdict: Redeliver, Wait: 4 * time.Second}},
		{name: "a DLQ letter's own reason is no request: nack Redelivers", rules: dlq, pol: rules, out: Nacked, md: md(codec.HeaderDeadLetter, "again"),
			want: Decision{Verdict: Redeliver, Wait: time.Second}},
		{name: "drop mark on a DLQ drops when acked", rules: dlq, pol: rules, out: Acked, md: md(codec.HeaderDrop, "true"),
			want: Decision{Verdict: DropIt}},
		{name: "drop mark on a DLQ drops when nacked (DeadLetter on a dead letter)", rules: dlq, pol: rules, out: Nacked,
			md: md(codec.HeaderDrop, "true", codec.HeaderDeadLetter, "again"), want: Decision{Verdict: DropIt}},
		{name: "replay and drop marks on a DLQ replay, then delete", rules: dlq, pol: rules, out: Acked,
			md: md(codec.HeaderReplay, "true", codec.HeaderDrop, "true"), want: Decision{Verdict: ReplayIt, Drop: true}},
		{name: "replay mark on a nacked DLQ letter Redelivers", rules: dlq, pol: rules, out: Nacked, md: md(codec.HeaderReplay, "true"),
			want: Decision{Verdict: Redeliver, Wait: time.Second}},
		{name: "drop mark stopped stays pending", rules: dlq, pol: rules, out: Stopped, md: md(codec.HeaderDrop, "true"),
			want: Decision{Verdict: LeavePending}},
		{name: "drop mark on a topic is a plain ack", rules: topic, pol: rules, out: Acked, md: md(codec.HeaderDrop, "true"), want: Decision{Verdict: AckIt}},
		{name: "drop mark on a topic nack retries", rules: topic, pol: rules, out: Nacked, md: md(codec.HeaderDrop, "true"),
			want: Decision{Verdict: RetryLater, Reason: "nacked", Retries: 1, Due: now.Add(time.Second)}},
		{name: "a snooze parks the message with its retries unchanged", rules: topic, pol: rules, out: Nacked,
			md:   md(codec.HeaderSnooze, "30s", codec.HeaderRetryCount, "1"),
			want: Decision{Verdict: RetryLater, Retries: 1, Snoozes: 1, Due: now.Add(30 * time.Second)}},
		{name: "a short snooze is appended at once", rules: topic, pol: rules, out: Nacked, md: md(codec.HeaderSnooze, "0s"),
			want: Decision{Verdict: RetryNow, Snoozes: 1}},
		{name: "a snooze beyond MaxSnoozes is a failure", rules: topic, pol: rules, out: Nacked,
			md:   md(codec.HeaderSnooze, "30s", codec.HeaderSnoozeCount, "2"),
			want: Decision{Verdict: RetryLater, Reason: "snoozed more than 2 times", Retries: 1, Due: now.Add(time.Second)}},
		{name: "a snooze on the last retry is no failure", rules: topic, pol: rules, out: Nacked,
			md:   md(codec.HeaderSnooze, "1m", codec.HeaderRetryCount, "3"),
			want: Decision{Verdict: RetryLater, Retries: 3, Snoozes: 1, Due: now.Add(time.Minute)}},
		{name: "an outage holds the message, whatever its retries", rules: topic, pol: rules, out: Nacked,
			md:   md(codec.HeaderOutage, "payments down", codec.HeaderRetryCount, "3"),
			want: Decision{Verdict: WaitOutage, Reason: "payments down"}},
		{name: "an outage on a DLQ Redelivers as any nack", rules: dlq, pol: rules, out: Nacked, md: md(codec.HeaderOutage, "down"),
			want: Decision{Verdict: Redeliver, Wait: time.Second}},
		{name: "DeadLetter beats an outage", rules: topic, pol: rules, out: Nacked, md: md(codec.HeaderOutage, "down", codec.HeaderDeadLetter, "bad"),
			want: Decision{Verdict: DeadLetter, Reason: "bad"}},
		{name: "failures in a row below After retry", rules: topic, pol: detect, out: Nacked, md: md(codec.HeaderLastError, "boom"), run: Run{InARow: 1},
			want: Decision{Verdict: RetryLater, Reason: "boom", Retries: 1, Due: now.Add(time.Second)}},
		{name: "the After-th failure in a row is an outage", rules: topic, pol: detect, out: Nacked, md: md(codec.HeaderLastError, "boom"), run: Run{InARow: 2},
			want: Decision{Verdict: WaitOutage, Reason: "boom"}},
		{name: "an ack after failures in a row is an ack", rules: topic, pol: detect, out: Acked, run: Run{InARow: 9},
			want: Decision{Verdict: AckIt}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := message.NewMessage("id", nil)
			for k, v := range tt.md {
				m.Metadata.Set(k, v)
			}
			if got := Decide(now, tt.rules, tt.pol, tt.out, m, tt.run); got != tt.want {
				t.Fatalf("decide = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// exponential is a Backoff: base * 2^(attempt-1), capped at max.
type exponential struct{ base, max time.Duration }

func (e exponential) NextBackoff(attempt int) time.Duration {
	d := e.base
	for i := 1; i < attempt && d < e.max; i++ {
		d *= 2
	}
	return min(d, e.max)
}

func md(kv ...string) message.Metadata {
	out := message.Metadata{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}
