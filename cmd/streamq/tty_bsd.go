//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package main

import "golang.org/x/sys/unix"

// isTTY reports whether fd is a terminal: TIOCGETA succeeds only on one.
func isTTY(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TIOCGETA) //nolint:gosec // a file descriptor fits in an int
	return err == nil
}
