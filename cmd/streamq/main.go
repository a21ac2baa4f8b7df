// Command streamq operates streamq topics, consumer groups and dead-letter queues on Redis
// (single node or Cluster), follows topics live, and runs a self-contained demo.
//
//	streamq topics                      list topics
//	streamq info TOPIC                  length, ids, groups and DLQ per partition
//	streamq stats TOPIC GROUP           pending, lag, leases and frontier of a group
//	streamq dlq list TOPIC              dead letters (--count-by reason: counted by reason)
//	streamq tail TOPIC                  follow new entries live
//	streamq publish TOPIC < payload     send a test message
//	streamq demo                        the demo (embedded Redis unless REDIS_URL is set)
//	streamq --help                      every command, flag and exit code
//
// Tables are the default output, --json prints a stable JSON shape for scripts. The exit
// codes are documented in exitcodes.go and in "streamq --help".
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the process exit code. Interrupts
// (SIGINT, SIGTERM) cancel the command's context; a second one kills the process.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
			signal.Stop(sigs) // a second Ctrl-C terminates at once
			cancel(errInterrupted)
		case <-ctx.Done():
		}
	}()

	a := newApp(stdout, stderr, os.Stdin)
	defer a.close()
	root := newRootCmd(a)
	if args == nil {
		args = []string{} // nil would make cobra read os.Args
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	var silent *silentError
	if errors.As(err, &silent) {
		return silent.code
	}
	if interrupted(ctx) {
		fmt.Fprintf(stderr, "%s: interrupted: %v\n", cmd.CommandPath(), err)
		return exitInterrupted
	}
	if !a.ran {
		// Cobra rejected the command line before the command ran: unknown command or flag,
		// bad flag value, wrong arguments, a required flag missing.
		err = &usageError{err: err}
	}
	fmt.Fprintf(stderr, "%s: %v%s\n", cmd.CommandPath(), err, a.onServer(err))
	var usage *usageError
	if errors.As(err, &usage) && !usage.noHint {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return exitCode(err)
}
