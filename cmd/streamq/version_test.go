package main

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVersionIsTheChangelogs: the version streamq prints is that of CHANGELOG.md's newest
// version heading, the one the next tag carries.
func TestVersionIsTheChangelogs(t *testing.T) {
	text, err := os.ReadFile("../../CHANGELOG.md")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\]`).FindSubmatch(text)
	require.NotNil(t, m, "CHANGELOG.md has no version heading")
	require.Equal(t, string(m[1]), version, "streamq version and CHANGELOG.md")
}
