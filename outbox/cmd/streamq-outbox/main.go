// Command streamq-outbox runs the relay of a streamq transactional outbox, shows its lag and
// prints or applies its migration.
//
//	streamq-outbox migrate --db-driver mysql --db-dsn 'root@tcp(127.0.0.1:3306)/app'
//	streamq-outbox relay   --db-driver mysql --redis-url redis://127.0.0.1:6379   # $OUTBOX_DSN
//	streamq-outbox status  --db-driver mysql                                       # rows waiting
//
// Exit codes: 0 ok, 1 error (database, Redis, missing tables), 2 usage error.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes args and returns the exit code; SIGINT and SIGTERM stop the command.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	printf(stderr, "streamq-outbox: %v\n", err)
	var usage *usageError
	if errors.As(err, &usage) {
		return exitUsage
	}
	return exitError
}

// usageError is a command-line error (exit 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "streamq-outbox",
		Short: "Relay a transactional outbox into streamq topics",
		Long: `streamq-outbox moves the rows of a streamq outbox table (written by outbox.Publisher in the
service's transactions) into streamq topics, and shows how far behind it is.

Database: --db-driver mysql|postgres and --db-dsn, else $OUTBOX_DSN.
Redis: --redis-url, else $REDIS_URL, else redis://127.0.0.1:6379.

Exit codes: 0 ok, 1 error (database, Redis, missing tables), 2 usage error.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err: err} })
	root.AddCommand(relayCmd(stdout), statusCmd(stdout), migrateCmd(stdout))
	return root
}

// printf writes a line of the command's output; a failed write (a closed pipe) has nowhere
// better to be reported, and the exit code comes from the command.
func printf(w io.Writer, format string, args ...any) { _, _ = fmt.Fprintf(w, format, args...) }
