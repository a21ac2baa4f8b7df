package streamq

import (
	"errors"
	"fmt"
	"time"

	"github.com/streamq-dev/streamq/internal/publish"
)

const (
	defaultMaxLen       = publish.DefaultMaxLen
	defaultTrimInterval = time.Minute
	// defaultGroupExpiry is how long a consumer group may have no live member on a partition
	// before retention stops waiting for it there (Kafka's offsets.retention.minutes).
	defaultGroupExpiry = 7 * 24 * time.Hour
	// minGroupExpiry is the shortest GroupExpiry accepted.
	minGroupExpiry = time.Second
)

// TrimPolicy says what retention may remove.
type TrimPolicy string

// Trim policies.
const (
	// TrimAcked, the default, removes only entries that every consumer group registered on
	// the partition, live or not, has been delivered and acked (what Redis 8.2 calls ACKED
	// trimming). A group that never consumes holds retention back until it is deleted or
	// expires (GroupExpiry).
	TrimAcked TrimPolicy = "acked"
	// TrimHard applies retention to unread entries too: a hard memory cap. Every entry it
	// removes before some group acked it is counted (Metrics.Trimmed with kind
	// "length-unacked" or "age-unacked", Subscriber.Stats().TrimmedUnacked, admin) and logged.
	TrimHard TrimPolicy = "hard"
)

// RetentionConfig is what a Subscriber's lease holders trim from their partitions and DLQs
// every TrimInterval, besides the length retention the topic's Publishers recorded
// (TrimConfig).
type RetentionConfig struct {
	// MaxAge removes entries older than this (XTRIM MINID). Under the default Policy it stops
	// at the oldest entry some registered group has not been delivered and acked. Default 0:
	// off.
	MaxAge time.Duration
	// Policy says whether MaxAge may remove entries a group has not acked. Default
	// TrimAcked; TrimHard removes them all the same, counting and logging each.
	Policy TrimPolicy
	// GroupExpiry: a consumer group with no live member on a partition for this long stops
	// holding back retention there, so a forgotten group cannot fill Redis; what it loses is
	// counted and reported when it comes back. Set the same on Publishers (Trim.GroupExpiry).
	// Default 7 days; -1: off; at least 1s and twice TrimInterval. See docs/storage.md.
	GroupExpiry time.Duration
	// TrimInterval is how often the lease holders apply MaxAge, the topic's length retention,
	// DLQ retention, and remove orphaned payloads. Default 1m.
	TrimInterval time.Duration
	// DLQMaxAge removes dead letters older than this. Default 0: off.
	DLQMaxAge time.Duration
	// DLQMaxLen keeps at most this many dead letters per partition. Default 0: off.
	DLQMaxLen int64
}

func (r *RetentionConfig) setDefaults() {
	setDefault(&r.Policy, TrimAcked)
	setDefault(&r.GroupExpiry, defaultGroupExpiry)
	setDefault(&r.TrimInterval, defaultTrimInterval)
}

func (r RetentionConfig) validate() error {
	var errs []error
	if r.MaxAge < 0 || r.DLQMaxAge < 0 || r.DLQMaxLen < 0 {
		errs = append(errs, fmt.Errorf("Retention.MaxAge, DLQMaxAge and DLQMaxLen must not be negative, got %s, %s, %d", r.MaxAge, r.DLQMaxAge, r.DLQMaxLen))
	}
	errs = append(errs, checkTrimPolicy("Retention.Policy", r.Policy),
		durationPositive("Retention.TrimInterval", r.TrimInterval),
		checkGroupExpiry("Retention.GroupExpiry", r.GroupExpiry, r.TrimInterval, "Retention.TrimInterval"))
	return errors.Join(errs...)
}

func checkTrimPolicy(path string, p TrimPolicy) error {
	if p == TrimAcked || p == TrimHard {
		return nil
	}
	return fmt.Errorf("%s must be %q or %q, got %q", path, TrimAcked, TrimHard, p)
}

// checkGroupExpiry checks a GroupExpiry after setDefaults: -1 (off), or at least
// minGroupExpiry and twice seenEvery (how often a lease holder records its group live,
// named by seenName; 0 for a Publisher, which records nothing).
func checkGroupExpiry(path string, d, seenEvery time.Duration, seenName string) error {
	switch {
	case d == -1:
		return nil
	case d < minGroupExpiry:
		return fmt.Errorf("%s must be at least %s, 0 (default) or -1 (off), got %s", path, minGroupExpiry, d)
	case seenEvery > 0 && d < 2*seenEvery:
		return fmt.Errorf("%s %s must be at least twice %s %s (a lease holder records its group live every TrimInterval)", path, d, seenName, seenEvery)
	}
	return nil
}

// groupExpiryOf is the expiry a retention rule takes: 0 when off.
func groupExpiryOf(d time.Duration) time.Duration { return max(d, 0) }
