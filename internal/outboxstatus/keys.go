// Package outboxstatus holds every Redis command of the transactional outbox's status: the
// relays of github.com/streamq-dev/streamq/outbox report their lag here (Write), and admin
// and the streamq CLI read it back (Read, Names). Nothing here talks to SQL.
//
// Key layout, under the control prefix (default "streaming:mq"), NAME being the outbox's
// name (its table, or table:group):
//
//	PREFIX:outboxes               set   every NAME that was reported
//	PREFIX:outbox:{NAME}          hash  table, group, dialect, pending, oldestAgeMs,
//	                                    measuredAt, moved, reportedAt, reportedBy, intervalMs
//	PREFIX:outbox:{NAME}:relays   hash  relay id -> JSON {host, pid, startedAt, reportedAt,
//	                                    intervalMs, moved}
//
// Times are the Redis server's clock (Unix ms), so relays and readers on hosts with skewed
// clocks agree on how old a report is. Both hashes expire KeyTTL after the last report.
package outboxstatus

import (
	"fmt"
	"time"

	"github.com/streamq-dev/streamq/internal/keys"
)

const (
	// KeyTTL is how long an outbox's status outlives its last report.
	KeyTTL = 7 * 24 * time.Hour
	// ForgetRelay is how long a relay that stopped reporting stays listed.
	ForgetRelay = time.Hour
)

// Keys are the keys of one outbox's status.
type Keys struct {
	Registry string // PREFIX:outboxes
	Status   string // PREFIX:outbox:{NAME}
	Relays   string // PREFIX:outbox:{NAME}:relays
}

// KeysFor returns the keys of outbox name under controlPrefix ("" for the default), or an
// error wrapping keys.ErrInvalidName for a name that would break the layout.
func KeysFor(controlPrefix, name string) (Keys, error) {
	if err := keys.ValidateName("outbox", name); err != nil {
		return Keys{}, err
	}
	c := keys.New("", controlPrefix).Control
	status := c + ":outbox:{" + name + "}"
	return Keys{Registry: registryKey(controlPrefix), Status: status, Relays: status + ":relays"}, nil
}

// registryKey is the set of every reported outbox name.
func registryKey(controlPrefix string) string {
	return keys.New("", controlPrefix).Control + ":outboxes"
}

// ms is d in whole milliseconds, as a Redis argument.
func ms(d time.Duration) string { return fmt.Sprint(d.Milliseconds()) }
