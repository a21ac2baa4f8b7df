//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/streamq-dev/streamq/admin"
)

// openTerminal opens a pseudo-terminal of cols columns: the side a program writes to
// (term) and the side its output is read from (reader). Both are closed at cleanup.
func openTerminal(t *testing.T, cols uint16) (term, reader *os.File) {
	t.Helper()
	reader, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { _ = reader.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(reader.Fd()), unix.TIOCSPTLCK, 0)) //nolint:gosec // a file descriptor fits in an int
	n, err := unix.IoctlGetInt(int(reader.Fd()), unix.TIOCGPTN)                       //nolint:gosec // a file descriptor fits in an int
	require.NoError(t, err)
	term, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = term.Close() })
	require.NoError(t, unix.IoctlSetWinsize(int(term.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 50, Col: cols})) //nolint:gosec // a file descriptor fits in an int
	return term, reader
}

// onTerminal runs the binary with args, its stdout a terminal of cols columns, and returns
// what it printed there (line ends as "\n") and its exit code.
func (e *cliEnv) onTerminal(cols uint16, args ...string) (string, int) {
	e.t.Helper()
	term, reader := openTerminal(e.t, cols)
	ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
	defer cancel()
	cmd := e.command(ctx, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = term, &stderr
	require.NoError(e.t, cmd.Start())
	_ = term.Close() // the child holds it: reading ends once the child exits
	var out bytes.Buffer
	_, err := io.Copy(&out, reader)
	var pathErr *os.PathError
	if err != nil && (!errors.As(err, &pathErr) || !errors.Is(pathErr.Err, syscall.EIO)) {
		require.NoError(e.t, err)
	}
	err = cmd.Wait()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(e.t, err, "stderr: %s", stderr.String())
	}
	return strings.ReplaceAll(out.String(), "\r\n", "\n"), code
}

// TestCLIDLQListFitsTheTerminal: on a terminal, dlq list fits the terminal's width: on 200
// columns each long reason stays on its letter's line; on 80 it is wrapped within 80; and
// with stdout not a terminal the table keeps its 80-column layout.
func TestCLIDLQListFitsTheTerminal(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	const topic = "wide-dlq"
	require.NoError(t, e.adm.CreateTopic(e.ctx, topic, 2))
	reason := "retries exhausted (3): payment gateway refused the charge: card issuer timeout after 3 attempts (upstream 504)"
	for i := range 4 {
		_, err := e.adm.AddDeadLetter(e.ctx, admin.NewDeadLetter{Topic: topic, Partition: i % 2, Group: "payments", Reason: reason, Payload: []byte("x")})
		require.NoError(t, err)
	}

	wide, code := e.onTerminal(200, "dlq", "list", topic)
	require.Equal(t, 0, code, wide)
	lines := strings.Split(strings.TrimRight(wide, "\n"), "\n")
	require.Len(t, lines, 5, "a header and one line per letter on 200 columns:\n%s", wide)
	for _, l := range lines[1:] {
		assert.True(t, strings.HasSuffix(l, reason), "the whole reason on the letter's line: %q", l)
		assert.LessOrEqual(t, len([]rune(l)), 200)
	}

	narrow, code := e.onTerminal(80, "dlq", "list", topic)
	require.Equal(t, 0, code, narrow)
	assert.Greater(t, strings.Count(narrow, "\n"), 5, "wrapped on 80 columns:\n%s", narrow)
	for _, l := range strings.Split(narrow, "\n") {
		assert.LessOrEqual(t, len([]rune(l)), 80, "line %q", l)
	}

	assert.Equal(t, narrow, e.ok("dlq", "list", topic), "not a terminal: the 80-column layout")
}
