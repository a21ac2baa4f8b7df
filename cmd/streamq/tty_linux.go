//go:build linux

package main

import "golang.org/x/sys/unix"

// isTTY reports whether fd is a terminal: TCGETS succeeds only on one.
func isTTY(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TCGETS) //nolint:gosec // a file descriptor fits in an int
	return err == nil
}
