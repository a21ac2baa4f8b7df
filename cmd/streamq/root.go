package main

import (
	"context"
	"fmt"
	"github.com/streamq-dev/streamq"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/streamq-dev/streamq/admin"
)

// defaultRedisURL is used by every command but demo when neither --redis-url nor REDIS_URL
// is set.
const defaultRedisURL = "redis://127.0.0.1:6379"

// app is the state shared by the commands of one invocation: the global flags, the output
// streams and the Redis connection, opened on first use.
type app struct {
	stdout, stderr io.Writer
	stdin          *os.File

	// Global flags.
	redisURL      string
	cluster       bool
	streamPrefix  string
	controlPrefix string
	// payloadThreshold and payloadRetention: how replays store large payloads (dlq, ui)
	payloadThreshold int
	payloadRetention time.Duration

	// utc shows times in UTC (--utc); local time with its zone otherwise.
	utc bool

	// Flags shared by several commands (only one command runs per invocation). json and wide
	// are the output format (-o json, --json; -o wide), output what -o said.
	json   bool
	wide   bool
	output string
	yes    bool
	force  bool

	// ran is set when a command's own code started: errors before it are cobra's command-line
	// errors, reported with the usage exit code.
	ran bool

	conn *conn
	adm  *admin.Admin
}

func newApp(stdout, stderr io.Writer, stdin *os.File) *app {
	return &app{stdout: stdout, stderr: stderr, stdin: stdin}
}

// close closes the Redis connection, if one was opened.
func (a *app) close() {
	if a.conn != nil {
		_ = a.conn.client.Close()
	}
}

// runE wraps a command's code: it marks the command as started (see app.ran) and checks the
// output flags.
func (a *app) runE(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		a.ran = true
		if a.json && a.output == outputWide {
			return usageErrorf("--json and -o wide ask for two outputs: --json is -o json; give one of them")
		}
		return fn(cmd, args)
	}
}

// withAdmin is runE for commands that work through admin: it connects and hands over the
// command's context and the Admin.
func (a *app) withAdmin(fn func(ctx context.Context, adm *admin.Admin, cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return a.runE(func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		adm, err := a.admin(ctx)
		if err != nil {
			return err
		}
		return fn(ctx, adm, cmd, args)
	})
}

// target is the Redis of the command: --redis-url, else $REDIS_URL, else fallback, with
// where it came from (named in errors).
func (a *app) target(fallback string) target {
	if a.redisURL != "" {
		return target{raw: a.redisURL, source: "from --redis-url"}
	}
	if env := os.Getenv("REDIS_URL"); env != "" {
		return target{raw: env, source: "from REDIS_URL"}
	}
	return target{raw: fallback, source: "default: REDIS_URL is unset"}
}

// url is the Redis URL of the command (see target).
func (a *app) url(fallback string) string { return a.target(fallback).raw }

// admin connects to Redis (once) and returns an Admin over it.
func (a *app) admin(ctx context.Context) (*admin.Admin, error) {
	if a.adm != nil {
		return a.adm, nil
	}
	redis.SetLogger(quietRedisLogger{}) // failures are reported once, by the command
	c, err := dial(ctx, a.target(defaultRedisURL), a.cluster)
	if err != nil {
		return nil, err
	}
	adm, err := admin.New(c.client, admin.Options{Keyspace: streamq.Keyspace{StreamPrefix: a.streamPrefix, ControlPrefix: a.controlPrefix},
		Payloads: streamq.PayloadConfig{Threshold: a.payloadThreshold, TTL: a.payloadRetention}})
	if err != nil {
		_ = c.client.Close()
		return nil, err
	}
	a.conn, a.adm = c, adm
	return adm, nil
}

// quietRedisLogger drops go-redis's own log lines.
type quietRedisLogger struct{}

func (quietRedisLogger) Printf(context.Context, string, ...any) {}

// Command groups of "streamq --help".
const (
	groupTopics = "topics"
	groupGroups = "groups"
	groupData   = "data"
	groupDLQ    = "dlq"
	groupOther  = "other"
)

// rootLong is the long help of streamq.
const rootLong = `streamq operates Kafka-style partitioned topics on Redis Streams (the streamq Watermill
Pub/Sub): topics, consumer groups, offsets, dead letters, and a live tail.

Redis: --redis-url, else $REDIS_URL, else ` + defaultRedisURL + ` (the demo uses an embedded
Redis instead). redis:// or rediss:// (TLS), with user:password@ for ACLs. For a Redis
Cluster give several comma-separated addresses or pass --cluster.

Output: tables for people that fit the terminal's width (80 columns when the output is not
a terminal, so a pipe always gets one layout); -o wide adds every column and cuts nothing,
-o json (or --json) prints a stable JSON shape for scripts. Times are local with their zone, or UTC
with --utc. Durations take d, h, m, s and ms (1d, 36h, 90m). Destructive
commands ask for confirmation on a terminal; --yes confirms, and without a terminal they
refuse unless --yes is given.

` + exitCodesHelp

// newRootCmd builds the command tree.
func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use: "streamq",
		Example: `  streamq topics
  streamq lag orders payments
  REDIS_URL=rediss://:secret@redis.internal:6380 streamq dlq list orders --failed-within 1d`,
		Short:         "Operate streamq topics, consumer groups and dead-letter queues on Redis",
		Long:          rootLong,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE:          a.parentRunE,
	}
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetIn(a.stdin)
	root.SetUsageTemplate(usageTemplate)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError(err) })
	root.SetHelpCommand(helpCmd(a))
	a.addGlobalFlags(root)
	addCommandGroups(root)
	defer completionExamples(root)
	root.AddCommand(
		topicsCmd(a), createTopicCmd(a), infoCmd(a), partitionsCmd(a), trimCmd(a), deleteTopicCmd(a),
		groupsCmd(a), statsCmd(a), lagCmd(a), pendingCmd(a), frontierCmd(a), resetOffsetCmd(a), pauseCmd(a), resumeCmd(a), deleteGroupCmd(a),
		recentCmd(a), rangeCmd(a), tailCmd(a), publishCmd(a),
		importCmd(a),
		dlqCmd(a),
		payloadsCmd(a),
		demoCmd(a),
		uiCmd(a),
		outboxCmd(a),
		versionCmd(a),
	)
	return root
}

// completionExamples adds cobra's completion commands to root now (cobra would when it runs)
// and gives each an example.
func completionExamples(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Example = "  source <(streamq completion bash)\n  streamq completion zsh > \"${fpath[1]}/_streamq\""
		for _, sh := range c.Commands() {
			c := sh
			switch c.Name() {
			case "bash":
				c.Example = "  source <(streamq completion bash)\n  streamq completion bash > /etc/bash_completion.d/streamq"
			case "zsh":
				c.Example = "  streamq completion zsh > \"${fpath[1]}/_streamq\""
			case "fish":
				c.Example = "  streamq completion fish > ~/.config/fish/completions/streamq.fish"
			case "powershell":
				c.Example = "  streamq completion powershell | Out-String | Invoke-Expression"
			}
		}
	}
}

// addGlobalFlags adds the persistent flags of every command to root: the Redis URL,
// --cluster and the key prefixes.
func (a *app) addGlobalFlags(root *cobra.Command) {
	pf := root.PersistentFlags()
	pf.StringVar(&a.redisURL, "redis-url", "",
		"Redis URL, redis:// or rediss:// (TLS), user:password@ for ACLs; comma-separated\n"+
			"addresses for a Cluster (default $REDIS_URL, else "+defaultRedisURL+";\n"+
			"the demo uses an embedded Redis instead)")
	pf.BoolVar(&a.utc, "utc", false, "show times in UTC (default: local time, with its zone)")
	pf.BoolVar(&a.cluster, "cluster", false, "connect to a Redis Cluster (implied by several comma-separated addresses)")
	pf.StringVar(&a.streamPrefix, "prefix-stream", "", "key prefix of the partition and DLQ streams (default \"stream:topic\"); must match the publishers'")
	pf.StringVar(&a.controlPrefix, "prefix-control", "", "key prefix of the control keys (default \"streaming:mq\"); must match the publishers'")
}

// addPayloadFlags adds the flags of the commands that replay dead letters (dlq, ui).
func (a *app) addPayloadFlags(fs *pflag.FlagSet) {
	fs.IntVar(&a.payloadThreshold, "payload-threshold", 0,
		"a replayed payload larger than this many bytes is stored in its own key, as the publishers\n"+
			"store it (default 65536; -1: inline); must match the publishers' Payloads.Threshold")
	durationVar(fs, &a.payloadRetention, "payload-retention", 0,
		"TTL of a replayed payload stored in its own key (default none); must match the publishers' Retention")
}

// addCommandGroups adds the command groups of "streamq --help" to root, help and
// completion going under Other Commands.
func addCommandGroups(root *cobra.Command) {
	root.AddGroup(
		&cobra.Group{ID: groupTopics, Title: "Topic Commands:"},
		&cobra.Group{ID: groupGroups, Title: "Consumer Group Commands:"},
		&cobra.Group{ID: groupData, Title: "Entry Commands:"},
		&cobra.Group{ID: groupDLQ, Title: "Dead-Letter Commands:"},
		&cobra.Group{ID: groupOther, Title: "Other Commands:"},
	)
	root.SetHelpCommandGroupID(groupOther)
	root.SetCompletionCommandGroupID(groupOther)
}

// parentRunE runs a command that only groups subcommands (streamq, streamq dlq, streamq
// partitions) when no subcommand was given: usage on stderr and the usage exit code, or an
// unknown-command error.
func (a *app) parentRunE(cmd *cobra.Command, args []string) error {
	a.ran = true
	if len(args) > 0 {
		return usageErrorf("unknown command %q for %q", args[0], cmd.CommandPath())
	}
	cmd.SetOut(a.stderr)
	_ = cmd.Usage()
	return &silentError{code: exitUsage}
}

// helpCmd replaces cobra's help command so that "help nope" is a usage error.
func helpCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "help [command]",
		Example: "  streamq help lag\n  streamq help dlq replay-all",
		Short:   "Help about any command",
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cmd, _, err := c.Root().Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					out = append(out, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: a.runE(func(c *cobra.Command, args []string) error {
			cmd, _, err := c.Root().Find(args)
			if err != nil || cmd == nil {
				return usageErrorf("unknown command %q", strings.Join(args, " "))
			}
			cmd.InitDefaultHelpFlag()
			return cmd.Help()
		}),
	}
}

// usageTemplate is cobra's default with "Usage: streamq CMD [flags]" on one line, and
// "Usage: streamq CMD [command]" for commands that group subcommands.
const usageTemplate = `Usage:{{if .HasAvailableSubCommands}} {{.CommandPath}} [command]{{else if .Runnable}} {{.UseLine}}{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}{{$cmds := .Commands}}{{if eq (len .Groups) 0}}

Commands:{{range $cmds}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{else}}{{range $group := .Groups}}

{{.Title}}{{range $cmds}}{{if (and (eq .GroupID $group.ID) (or .IsAvailableCommand (eq .Name "help")))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if not .AllChildCommandsHaveGroup}}

Additional Commands:{{range $cmds}}{{if (and (eq .GroupID "") (or .IsAvailableCommand (eq .Name "help")))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

Global Flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

// Output formats of -o.
const (
	outputTable = "table"
	outputWide  = "wide"
	outputJSON  = "json"
)

// addJSONFlag adds the output flags to cmd: -o table|wide|json, and --json (-o json).
func (a *app) addJSONFlag(cmd *cobra.Command) {
	cmd.Flags().VarP(outputValue{a}, "output", "o", "output: table (fits the terminal; 80 columns when not one), wide (every column) or json")
	cmd.Flags().BoolVar(&a.json, "json", false, "print JSON instead of a table (the same as -o json)")
}

// outputValue is the -o flag: it sets the app's output format.
type outputValue struct{ a *app }

func (v outputValue) Set(s string) error {
	switch s {
	case outputTable, outputWide, outputJSON:
	default:
		return fmt.Errorf("%q is not an output: give table, wide or json", s)
	}
	v.a.output = s
	v.a.wide = s == outputWide
	v.a.json = v.a.json || s == outputJSON
	return nil
}

func (v outputValue) Type() string { return "format" }

func (v outputValue) String() string {
	if v.a == nil || v.a.output == "" {
		return outputTable
	}
	return v.a.output
}

// addYesFlag adds --yes to a destructive cmd.
func (a *app) addYesFlag(cmd *cobra.Command) {
	cmd.Flags().BoolVarP(&a.yes, "yes", "y", false, "do not ask for confirmation (required when stdin is not a terminal)")
}

// addForceFlag adds --force to a delete cmd that refuses while members are live.
func (a *app) addForceFlag(cmd *cobra.Command, what string) {
	cmd.Flags().BoolVar(&a.force, "force", false, "delete even while members are live; they stop when they find the "+what+" gone")
}

// argsExactly requires exactly the named positional arguments, naming the first missing or
// unexpected one.
func argsExactly(names ...string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) > len(names):
			return usageErrorf("unexpected argument %q", args[len(names)])
		case len(args) < len(names):
			return usageErrorf("missing argument %s (expects %s)", names[len(args)], strings.Join(names, " "))
		}
		return nil
	}
}

// parsePartition reads a PARTITION argument.
func parsePartition(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 0 {
		return 0, usageErrorf("PARTITION must be a partition number (0, 1, ...), got %q", s)
	}
	return p, nil
}
