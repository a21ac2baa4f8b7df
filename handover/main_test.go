//go:build handover

package handover

import (
	"os"
	"testing"
)

// TestMain runs a member when HANDOVER_ROLE is set (the members are this test binary run
// again), and the tests otherwise.
func TestMain(m *testing.M) {
	if os.Getenv(envRole) == "member" {
		os.Exit(runMember())
	}
	os.Exit(m.Run())
}
