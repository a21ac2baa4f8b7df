package streamq

import (
	"fmt"
	"time"
)

const defaultIdempotencyWindow = 2 * time.Minute

// IdempotencyConfig is how a Publisher appends each message at most once to its partition
// (docs/publishing.md, Exactly once on the way in).
type IdempotencyConfig struct {
	// Window is how long a message sent again is recognized. Default 2 minutes; -1: off
	// (plain XADD, duplicates after lost replies).
	Window time.Duration
	// ByUUID drops a message whose UUID any Publisher appended to the partition within
	// Window: also a send again from another process (a relay, a restarted producer). It
	// costs about 120 bytes of Redis memory per message of the window and about half the
	// publish rate. Default false: the sends again of this Publisher (by go-redis, by
	// streamq, or by the caller publishing a message whose Publish failed) are dropped by
	// producer and sequence number, at most of the plain XADD rate.
	ByUUID bool
}

func (c *IdempotencyConfig) setDefaults() { setDefault(&c.Window, defaultIdempotencyWindow) }

func (c IdempotencyConfig) validate() error {
	switch w := c.Window; {
	case w != -1 && w < time.Millisecond:
		return fmt.Errorf("Idempotency.Window must be at least 1ms, 0 (default) or -1 (off), got %s", w)
	case w == -1 && c.ByUUID:
		return fmt.Errorf("Idempotency.ByUUID needs Idempotency.Window (it is -1, off)")
	}
	return nil
}

// on reports whether appends are idempotent.
func (c IdempotencyConfig) on() bool { return c.Window > 0 }
