package streamq

import (
	"errors"
	"fmt"
	"time"
)

// TrimConfig is a topic's length retention, set by its Publishers: they trim in the
// background and record it in the topic's metadata, where the partitions' lease holders
// read it and trim every Retention.TrimInterval. The Publishers of a topic should agree.
// See docs/storage.md.
type TrimConfig struct {
	// MaxLen is about how many entries each partition keeps. Under TrimAcked only entries
	// every registered group has acked are removed, so a partition grows past MaxLen while a
	// group is behind and shrinks back when it catches up. Default 100,000; -1: no length
	// retention.
	MaxLen int64
	// Exact trims to exactly MaxLen entries. Default false: whole macro nodes only, up to
	// about 100 entries more, which is cheaper.
	Exact bool
	// Policy says whether MaxLen may remove entries a group has not acked. Default
	// TrimAcked; TrimHard for a hard memory cap.
	Policy TrimPolicy
	// GroupExpiry: a consumer group with no live member on a partition for this long no
	// longer holds back this Publisher's trims of it (see RetentionConfig.GroupExpiry; set
	// the same on a topic's Publishers and Subscribers). Default 7 days; -1: off.
	GroupExpiry time.Duration
}

func (t *TrimConfig) setDefaults() {
	setDefault(&t.MaxLen, defaultMaxLen)
	setDefault(&t.Policy, TrimAcked)
	setDefault(&t.GroupExpiry, defaultGroupExpiry)
}

func (t TrimConfig) validate() error {
	var errs []error
	if t.MaxLen < -1 {
		errs = append(errs, fmt.Errorf("Trim.MaxLen must be > 0, 0 (default) or -1 (off), got %d", t.MaxLen))
	}
	errs = append(errs, checkTrimPolicy("Trim.Policy", t.Policy), checkGroupExpiry("Trim.GroupExpiry", t.GroupExpiry, 0, ""))
	return errors.Join(errs...)
}
