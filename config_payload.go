package streamq

import (
	"errors"
	"fmt"
	"time"
)

const defaultPayloadThreshold = 64 * 1024

// PayloadConfig is how large payloads are stored: in a key of their own in the partition's
// slot, the entry referring to it, so that Redis streams stay small. A Publisher offloads
// the payloads it publishes; a Subscriber the payloads of the dead letters it replays (set
// the same on both).
type PayloadConfig struct {
	// Threshold: payloads larger than this many bytes are offloaded. Default 64 KiB; -1:
	// never (payloads inline).
	Threshold int
	// TTL caps the lifetime of an offloaded payload. Default 0: it lives until every group
	// acked its entry, or the entry is gone.
	TTL time.Duration
}

func (p *PayloadConfig) setDefaults() { setDefault(&p.Threshold, defaultPayloadThreshold) }

func (p PayloadConfig) validate() error {
	var errs []error
	if p.Threshold < -1 {
		errs = append(errs, fmt.Errorf("Payloads.Threshold must be > 0, 0 (default) or -1 (off), got %d", p.Threshold))
	}
	if p.TTL < 0 {
		errs = append(errs, fmt.Errorf("Payloads.TTL must not be negative, got %s", p.TTL))
	}
	return errors.Join(errs...)
}
