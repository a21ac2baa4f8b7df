//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package main

// isTTY reports no terminal on other systems: destructive commands then need --yes, and no
// progress bar is drawn.
func isTTY(uintptr) bool { return false }

// termWidth reports no terminal on other systems: tables fit tableWidth.
func termWidth(uintptr) int { return 0 }
