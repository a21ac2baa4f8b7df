//go:build !race

package scenario_test

import (
	"testing"

	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// TestPubSubReconnect runs the universal suite with a RestartServiceCommand, so Watermill's
// own TestReconnect restarts this test's redis-server twice under load.
//
// It is built without -race only: watermill v1.5.1's TestReconnect appends to
// publishedMessages in one goroutine (pubsub/tests/test_pubsub.go:1086) and reads it in the
// test goroutine (:1120) with no synchronisation, which the race detector reports whenever the
// subscriber delivers promptly. `make test` runs this file in a second, race-free pass; the
// race build runs TestReconnectUnderRace (pubsub_reconnect_race_test.go) instead.
func TestPubSubReconnect(t *testing.T) {
	t.Parallel()
	streamqtest.Universal(t, 4, true, true)
}
