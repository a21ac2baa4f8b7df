package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// confirm asks the operator to confirm a destructive action described by what (a sentence
// without final punctuation). With --yes it returns at once. Without a terminal on stdin it
// refuses (usage exit code) and says to pass --yes; on a terminal it prompts on stderr and
// accepts "y" or "yes".
func (a *app) confirm(ctx context.Context, what string) error {
	if a.yes {
		return nil
	}
	if a.stdin == nil || !isTerminal(a.stdin) {
		return &usageError{noHint: true, err: fmt.Errorf("refusing to %s without confirmation: stdin is not a terminal; pass --yes to confirm", what)}
	}
	fmt.Fprintf(a.stderr, "About to %s.\nContinue? [y/N] ", what)
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(a.stdin).ReadString('\n')
		answer <- line
	}()
	select {
	case line := <-answer:
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return nil
		}
		return &usageError{noHint: true, err: errors.New("not confirmed: nothing was changed")}
	case <-ctx.Done():
		fmt.Fprintln(a.stderr)
		return context.Cause(ctx)
	}
}

// isTerminal reports whether f is a terminal (not a pipe, a file or /dev/null).
func isTerminal(f *os.File) bool {
	return f != nil && isTTY(f.Fd())
}
