package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
)

// commands lists every command of the tree under c, c included.
func commands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		out = append(out, commands(sub)...)
	}
	return out
}

// TestEveryHelpHasAnExample walks every command and checks that its --help, as the binary
// prints it, has an Examples section.
func TestEveryHelpHasAnExample(t *testing.T) {
	root := newRootCmd(newApp(os.Stdout, os.Stderr, os.Stdin))
	root.InitDefaultCompletionCmd() // cobra adds "completion" when it runs
	all := commands(root)
	assert.Greater(t, len(all), 30, "the walk found the command tree")
	for _, c := range all {
		if c.Hidden {
			continue
		}
		path := strings.Fields(c.CommandPath())[1:]
		t.Run(strings.Join(append([]string{"streamq"}, path...), " "), func(t *testing.T) {
			r := runHelp(t, append(path, "--help")...)
			assert.Equal(t, exitOK, r.code, r.stderr)
			assert.Regexp(t, `\nExamples:\n  .*streamq`, r.stdout, "%s --help has no example", c.CommandPath())
		})
	}
}

// runHelp runs the binary with args, without a Redis.
func runHelp(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = envWithout("REDIS_URL")
	return runCmd(t, cmd)
}
