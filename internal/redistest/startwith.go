package redistest

import (
	"errors"
	"testing"
)

// StartWith starts a redis-server like Start, with extra redis.conf lines written after the
// defaults (a later line overrides an earlier one: "appendfsync always" makes every write
// acknowledged to a client survive a kill -9 of the server). Like every server here it has a
// watchdog process that SIGKILLs it when the test process dies without running its cleanups
// (a panic, a -timeout, a kill -9), so no redis-server outlives a crashed test binary.
func StartWith(t testing.TB, extra ...string) *Server {
	t.Helper()
	bin := lookupBinary(t, "redis-server")
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("redistest: %v", err)
		}
		s, err := newServer(t, bin, port, t.TempDir(), append([]string(nil), extra...))
		if err != nil {
			t.Fatalf("redistest: %v", err)
		}
		t.Cleanup(func() { s.cleanup(t) })
		err = s.launch()
		if err == nil {
			return s
		}
		if !errors.Is(err, errPortTaken) || attempt == launchAttempts {
			t.Fatalf("redistest: %v", err)
		}
		t.Logf("redistest: %v; trying another port", err)
	}
}

// launchAttempts is how many sets of ports a start tries when another process takes a port
// between the probe and the bind.
const launchAttempts = 3

// AOFAlways is the redis.conf line that fsyncs the AOF before every reply: with it, a write
// Redis acknowledged survives a crash of the server. Use it with StartWith.
const AOFAlways = "appendfsync always"
