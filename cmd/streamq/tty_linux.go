//go:build linux

package main

import "golang.org/x/sys/unix"

// isTTY reports whether fd is a terminal: TCGETS succeeds only on one.
func isTTY(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TCGETS) //nolint:gosec // a file descriptor fits in an int
	return err == nil
}

// termWidth is the number of columns of the terminal fd is, 0 when fd is no terminal.
func termWidth(fd uintptr) int {
	ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ) //nolint:gosec // a file descriptor fits in an int
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
