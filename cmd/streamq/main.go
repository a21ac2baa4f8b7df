// Command streamq is the command-line tool of streamq, Kafka-style partitioned topics on
// Redis Streams for Watermill.
//
//	streamq demo [flags]   run a self-contained demo (embedded Redis unless REDIS_URL is set)
//	streamq help [command] show usage
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// command is one subcommand. run gets the arguments after the subcommand name and returns
// the process exit code.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
	// flags returns the subcommand's flag set, for "streamq help NAME".
	flags func(stderr io.Writer) *flag.FlagSet
}

func commands() []command {
	return []command{
		{
			name:    "demo",
			summary: "run two consumer-group members on a partitioned topic and show who handles what",
			run:     runDemo,
			flags:   func(w io.Writer) *flag.FlagSet { fs, _ := demoFlags(w); return fs },
		},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and returns the exit code: 2 for usage errors.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		return help(args[1:], stdout, stderr)
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "streamq: unknown command %q\n\n", name)
	usage(stderr)
	return 2
}

func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			fs := c.flags(stdout)
			fs.SetOutput(stdout)
			fs.Usage()
			return 0
		}
	}
	fmt.Fprintf(stderr, "streamq: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("streamq: Kafka-style partitioned topics on Redis Streams, for Watermill.\n\n")
	b.WriteString("Usage:\n  streamq <command> [flags]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(&b, "  %-8s %s\n", "help", "show this help, or a command's flags: streamq help demo")
	fmt.Fprint(w, b.String())
}
