//go:build soak

package soak

import (
	"os"
	"testing"
)

// TestMain runs a child role when SOAK_ROLE is set (the soak's processes are this test
// binary run again), and the tests otherwise.
func TestMain(m *testing.M) {
	if role := os.Getenv(envRole); role != "" {
		os.Exit(runRole(role))
	}
	os.Exit(m.Run())
}
