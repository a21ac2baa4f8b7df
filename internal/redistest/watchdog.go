package redistest

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
)

// watchdogScript waits for a line on stdin. "stop" means the test cleaned up after itself.
// Anything else, end of file included (the test process died and the kernel closed the
// pipe), kills the redis-server whose pidfile is $1, after checking that the pid still is a
// redis-server so a recycled pid is never signalled.
const watchdogScript = `read -r line || true
[ "$line" = stop ] && exit 0
pid=$(cat "$1" 2>/dev/null) || exit 0
grep -q redis-server "/proc/$pid/cmdline" 2>/dev/null && kill -9 "$pid"
exit 0
`

// watchdog is a shell process holding the read end of a pipe whose write end only the test
// process has (Go opens it close-on-exec, so no other child inherits it).
type watchdog struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startWatchdog starts the watchdog of the server whose pidfile is pidfile. It runs in its
// own process group, so a Ctrl-C meant for the test does not kill it before it acts.
func startWatchdog(pidfile string) (*watchdog, error) {
	cmd := exec.Command("sh", "-c", watchdogScript, "redistest-watchdog", pidfile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("watchdog stdin: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start watchdog: %w", err)
	}
	return &watchdog{cmd: cmd, stdin: stdin}, nil
}

// stop tells the watchdog the server was stopped by the test and waits for it to exit.
func (w *watchdog) stop() error {
	_, werr := io.WriteString(w.stdin, "stop\n")
	cerr := w.stdin.Close()
	if err := errors.Join(werr, cerr, w.cmd.Wait()); err != nil {
		return fmt.Errorf("stop watchdog: %w", err)
	}
	return nil
}
