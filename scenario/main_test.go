package scenario_test

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// TestMain skips every test of the package under -short (make test-short): each kills, stops
// or restarts a process or a server, or fails one over, and runs in make test. A child process
// (this binary run again by a test) is never started with -short.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("scenario: -short: the process-level scenarios run in make test, not make test-short")
		os.Exit(0)
	}
	os.Exit(m.Run())
}
