package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/streamq-dev/streamq/admin"
)

// Exit codes of the streamq command. Scripts can rely on them.
const (
	// exitOK: the command did what it was asked.
	exitOK = 0
	// exitError: Redis or the operation failed (connection refused, timeout, a Redis error,
	// a topic that already exists, a demo check that failed).
	exitError = 1
	// exitUsage: the command line was wrong (unknown command or flag, bad flag value, wrong
	// number of arguments, an invalid offset, partition or id), or a destructive command was
	// not confirmed (no --yes and no terminal, or the prompt was answered "no").
	exitUsage = 2
	// exitNotFound: the topic, consumer group or entry does not exist
	// (admin.ErrTopicNotFound, admin.ErrGroupNotFound, admin.ErrEntryNotFound).
	exitNotFound = 3
	// exitLiveMembers: delete-group or delete-topic refused because members of the group or
	// topic are live (admin.ErrLiveMembers); nothing was deleted. --force deletes anyway.
	exitLiveMembers = 4
	// exitInterrupted: stopped by Ctrl-C / SIGTERM before it finished (128 + SIGINT). tail
	// exits 0 instead: Ctrl-C is how it is meant to stop.
	exitInterrupted = 130
)

// exitCodesHelp documents the exit codes in "streamq --help".
const exitCodesHelp = `Exit codes:
  0    ok
  1    Redis or operation error (connection, timeout, Redis error, topic exists)
  2    usage error: unknown command or flag, bad argument or flag value, or a
       destructive command not confirmed (no --yes and stdin is not a terminal)
  3    not found: unknown topic, consumer group or entry
  4    refused: delete-group or delete-topic found live members (nothing was
       deleted; --force deletes anyway)
  130  interrupted (Ctrl-C); tail exits 0 when stopped with Ctrl-C`

// usageError is an error of the command line; it exits with exitUsage. Unless noHint, the
// error is followed by a pointer to the command's --help.
type usageError struct {
	err    error
	noHint bool
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usageErrorf returns a usageError with a formatted message.
func usageErrorf(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// silentError has already been reported (e.g. the usage was printed); run prints nothing
// more and exits with code.
type silentError struct{ code int }

func (e *silentError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// notFoundError reports something that does not exist but is not an admin sentinel (a dead
// letter DeleteDeadLetter did not find); it exits with exitNotFound.
type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }

// exitCode maps an error returned by a command to the process exit code.
func exitCode(err error) int {
	var (
		usage    *usageError
		silent   *silentError
		notFound *notFoundError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &silent):
		return silent.code
	case errors.As(err, &usage):
		return exitUsage
	case errors.As(err, &notFound),
		errors.Is(err, admin.ErrTopicNotFound),
		errors.Is(err, admin.ErrGroupNotFound),
		errors.Is(err, admin.ErrEntryNotFound):
		return exitNotFound
	case errors.Is(err, admin.ErrInvalidArgument):
		return exitUsage
	case errors.Is(err, admin.ErrLiveMembers):
		return exitLiveMembers
	case errors.Is(err, errInterrupted):
		return exitInterrupted
	}
	return exitError
}

// errInterrupted is the cause of the command context's cancellation on SIGINT/SIGTERM.
var errInterrupted = errors.New("interrupted")

// interrupted reports whether ctx was cancelled by a signal.
func interrupted(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errInterrupted)
}
