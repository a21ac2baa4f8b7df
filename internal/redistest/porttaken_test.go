package redistest

import (
	"context"
	"errors"
	"testing"
)

// TestLaunchOnATakenPort: a server whose port another redis-server holds (taken between the
// probe and the bind) reports errPortTaken instead of passing the other's PING for its own,
// and its cleanup leaves the other running.
func TestLaunchOnATakenPort(t *testing.T) {
	other := Start(t)
	bin := lookupBinary(t, "redis-server")
	s, err := newServer(t, bin, other.port, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	err = s.launch()
	if !errors.Is(err, errPortTaken) {
		t.Fatalf("launch on a taken port: %v, want errPortTaken", err)
	}
	s.cleanup(t)
	if err := other.Client(t).Ping(context.Background()).Err(); err != nil {
		t.Fatalf("the other server after the cleanup: %v", err)
	}
}
