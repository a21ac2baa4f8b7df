// Package redistest starts real redis-server processes for integration tests.
//
// Each Server runs daemonized on a free 127.0.0.1 port inside the test's
// temporary directory with AOF persistence enabled, and is stopped by
// t.Cleanup. StartCluster starts a Redis Cluster of such servers (joined with
// redis-cli --cluster create), with helpers to find and kill masters for
// failover tests. StartSentinel starts a master, its replica and three
// sentinels (redis-server --sentinel), with helpers to kill the master and
// wait for the promotion. StartReplica starts a replica of a Server;
// Server.Pause (SIGSTOP) and Resume stall and continue a server's process.
// Tests are skipped when redis-server (or, for a cluster, redis-cli) is not
// installed, unless STREAMQ_REQUIRE_REDIS=1 is set, in which case they fail.
//
// STREAMQ_REDIS_SERVER=NAME (valkey8, redis8, valkey8.1) starts instead the server of that
// name that scripts/servers.sh fetched from Debian's packages into .servers/NAME (see
// ServerEnv); a test run without it skips, saying how to fetch it.
package redistest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// readyTimeout bounds how long we wait for redis-server to answer PING.
	readyTimeout = 10 * time.Second
	// exitTimeout bounds how long we wait for a redis-server process to exit.
	exitTimeout = 10 * time.Second
	// pollInterval is the delay between readiness / exit checks.
	pollInterval = 20 * time.Millisecond
	// logTailBytes is how much of the log file is included in failures.
	logTailBytes = 2048
)

// Server is a redis-server process owned by one test.
type Server struct {
	mu      sync.Mutex // serialises Restart, Kill and cleanup
	t       testing.TB // test that owns the server
	bin     string     // path of redis-server
	port    int
	dir     string
	conf    string
	pidfile string
	logfile string
	extra   []string // further redis.conf lines (cluster nodes, sentinels)
	// sentinel runs the server in Sentinel mode (redis-server CONF --sentinel), without the
	// persistence lines of a data node.
	sentinel bool
	wd       *watchdog // kills the server if the test process dies without its cleanups

	resumeOnCleanup bool // Pause registered a cleanup that resumes the process
	// foreign: launch found another process answering on the port (ours failed to bind it);
	// cleanup must not shut that one down.
	foreign bool
}

// errPortTaken reports a launch that found another server answering on its port: the port
// was free when probed and taken before redis-server bound it. The caller tries new ports.
var errPortTaken = errors.New("port taken by another process")

// RequireRedis reports whether a missing redis-server must fail tests
// instead of skipping them (env STREAMQ_REQUIRE_REDIS=1).
func RequireRedis() bool {
	return os.Getenv("STREAMQ_REQUIRE_REDIS") == "1"
}

// SkipShort skips t under -short (make test-short): what needs starts more than one server, a
// failover, a killed process or a soak runs in make test only. what names it in the message.
func SkipShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: %s runs in make test, not make test-short", what)
	}
}

// Start starts redis-server on a free 127.0.0.1 port in t.TempDir(), with
// AOF on (appendonly yes, appendfsync everysec) and no RDB saves, and
// registers t.Cleanup to stop it. When redis-server is not on PATH the test
// is skipped, or fails if RequireRedis() is true.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t)
}

// newServer prepares (but does not start) a server on port in dir, with extra redis.conf
// lines, writes its config and starts its watchdog: a server outlives no crashed test
// binary (a panic, a -timeout, a kill -9), whatever started it.
func newServer(t testing.TB, bin string, port int, dir string, extra []string) (*Server, error) {
	s := serverIn(t, bin, port, dir, extra)
	if err := s.prepare(); err != nil {
		return nil, err
	}
	return s, nil
}

// serverIn describes a server on port in dir; prepare makes it ready to launch.
func serverIn(t testing.TB, bin string, port int, dir string, extra []string) *Server {
	return &Server{
		t:       t,
		bin:     bin,
		port:    port,
		dir:     dir,
		conf:    filepath.Join(dir, "redis.conf"),
		pidfile: filepath.Join(dir, "redis.pid"),
		logfile: filepath.Join(dir, "redis.log"),
		extra:   extra,
	}
}

// prepare writes the server's config and starts its watchdog.
func (s *Server) prepare() error {
	if err := s.writeConfig(); err != nil {
		return err
	}
	wd, err := startWatchdog(s.pidfile)
	if err != nil {
		return err
	}
	s.wd = wd
	return nil
}

// writeConfig writes the redis.conf used by every (re)start of the server.
func (s *Server) writeConfig() error {
	lines := []string{
		"port " + strconv.Itoa(s.port),
		"bind 127.0.0.1",
		"protected-mode no",
		"dir " + confQuote(s.dir),
		"daemonize yes",
		"pidfile " + confQuote(s.pidfile),
		"logfile " + confQuote(s.logfile),
	}
	if !s.sentinel {
		lines = append(lines, "appendonly yes", "appendfsync everysec", `save ""`)
	}
	lines = append(lines, s.extra...)
	data := []byte(strings.Join(lines, "\n") + "\n")
	if err := os.WriteFile(s.conf, data, 0o600); err != nil {
		return fmt.Errorf("write redis config: %w", err)
	}
	return nil
}

// confQuote quotes s as a redis.conf string argument.
func confQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// shellQuote quotes s as a single bash word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Addr returns the server address, "127.0.0.1:PORT".
func (s *Server) Addr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
}

// URL returns the server URL, "redis://127.0.0.1:PORT".
func (s *Server) URL() string {
	return "redis://" + s.Addr()
}

// Client returns a new go-redis client connected to this server; it is
// closed in t.Cleanup.
func (s *Server) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Restart shuts the server down (SHUTDOWN, which flushes the AOF) and starts
// it again on the same port and directory, waiting until it answers PING.
// A server that is not running (e.g. after Kill) is just started.
// It is safe to call from any goroutine while clients are connected.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.shutdown(false); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	if err := s.launch(); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	return nil
}

// RestartCommand returns a command line that restarts this server when run
// with exec.Command, for watermill's tests.Features.RestartServiceCommand.
// It writes a bash script into the server's directory; redis-cli (of the server
// STREAMQ_REDIS_SERVER chose) must be there, otherwise the test that started the
// server fails. Call it from that test's goroutine.
func (s *Server) RestartCommand() []string {
	t := s.t
	t.Helper()
	cli, missing := findBinary("redis-cli")
	if missing != "" {
		t.Fatalf("redistest: RestartCommand needs redis-cli: %s", missing)
	}
	script := filepath.Join(s.dir, "restart.sh")
	if err := os.WriteFile(script, []byte(s.restartScript(cli)), 0o700); err != nil {
		t.Fatalf("redistest: write restart script: %v", err)
	}
	return []string{"bash", script}
}

// restartScript renders the bash script returned by RestartCommand.
func (s *Server) restartScript(cli string) string {
	cliCmd := shellQuote(cli) + " -h 127.0.0.1 -p " + strconv.Itoa(s.port)
	return `#!/usr/bin/env bash
# Restarts the redis-server started by redistest (generated file).
cli() { ` + cliCmd + ` "$@" 2>/dev/null; }
cli shutdown >/dev/null || true
# Wait (bounded) until the old server stopped answering.
for _ in $(seq 1 200); do
  [ "$(cli ping)" = PONG ] || break
  sleep 0.05
done
` + s.commandLine() + ` || exit 1
# Wait (bounded, ~10s) until the new server answers PING.
for _ in $(seq 1 200); do
  [ "$(cli ping)" = PONG ] && exit 0
  sleep 0.05
done
echo "redis-server on port ` + strconv.Itoa(s.port) + ` did not answer PING" >&2
exit 1
`
}

// args returns the arguments redis-server is started with: the config file, and --sentinel
// for a sentinel.
func (s *Server) args() []string {
	if s.sentinel {
		return []string{s.conf, "--sentinel"}
	}
	return []string{s.conf}
}

// commandLine is the bash command that starts the server.
func (s *Server) commandLine() string {
	words := []string{shellQuote(s.bin)}
	for _, a := range s.args() {
		words = append(words, shellQuote(a))
	}
	return strings.Join(words, " ")
}

// Kill sends SIGKILL to the current redis-server process, without flushing
// anything, for crash tests.
func (s *Server) Kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, err := s.readPID()
	if err != nil {
		return fmt.Errorf("kill: %w", err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill redis-server pid %d: %w", pid, err)
	}
	// A killed server leaves a stale pidfile; drop it so cleanup never
	// signals a recycled pid.
	_ = os.Remove(s.pidfile)
	if err := s.waitDown(pid); err != nil {
		return fmt.Errorf("kill: %w", err)
	}
	return nil
}

// cleanup stops whatever redis-server process currently serves s.
func (s *Server) cleanup(t testing.TB) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.stopWatchdog(t)
	if s.foreign {
		return
	}
	if err := s.shutdown(true); err == nil {
		return
	}
	if pid, err := s.readPID(); err == nil && isRedisProcess(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		if err := s.waitDown(pid); err != nil {
			t.Errorf("redistest: cleanup: %v", err)
		}
	}
}

// stopWatchdog ends the watchdog once the test stopped the server itself.
func (s *Server) stopWatchdog(t testing.TB) {
	if s.wd == nil {
		return
	}
	if err := s.wd.stop(); err != nil {
		t.Errorf("redistest: %v", err)
	}
	s.wd = nil
}

// launch starts redis-server (which daemonizes) and waits until it answers
// PING. The caller must hold s.mu or own s exclusively.
func (s *Server) launch() error {
	out, err := exec.Command(s.bin, s.args()...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("run %s: %w: %s%s", s.bin, err, out, s.logTail())
	}
	if err := s.waitReady(); err != nil {
		return fmt.Errorf("%w%s", err, s.logTail())
	}
	return nil
}

// waitReady polls PING until it succeeds or readyTimeout elapses. It only
// PINGs once the port accepts connections, to keep go-redis from logging
// failed dials.
func (s *Server) waitReady() error {
	c := s.controlClient()
	defer func() { _ = c.Close() }()
	lastErr := errors.New("port closed")
	err := poll(readyTimeout, func() bool {
		if !s.portOpen() {
			return false
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		lastErr = c.Ping(ctx).Err() // e.g. LOADING while replaying the AOF
		return lastErr == nil
	})
	if err != nil {
		return fmt.Errorf("redis-server on %s not ready: %w (last PING error: %w)",
			s.Addr(), err, lastErr)
	}
	return s.checkOwnPort(c)
}

// checkOwnPort reports errPortTaken when the server answering on the port is not the process
// of this Server's pidfile (redis-server writes it before it serves connections).
func (s *Server) checkOwnPort(c *redis.Client) error {
	pid, err := s.readPID()
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		var info string
		if info, err = c.Info(ctx, "server").Result(); err != nil {
			return fmt.Errorf("redis-server on %s: INFO server: %w", s.Addr(), err)
		}
		if strings.Contains(info, "\nprocess_id:"+strconv.Itoa(pid)+"\r") {
			return nil
		}
	}
	if err == nil {
		err = fmt.Errorf("our pid %d is not the one answering", pid)
	}
	s.foreign = true
	return fmt.Errorf("redis-server on %s: %w (%w)", s.Addr(), errPortTaken, err)
}

// shutdown sends SHUTDOWN (or SHUTDOWN NOSAVE) and waits for the process to
// exit. A server that is not running is not an error. The caller must hold
// s.mu.
func (s *Server) shutdown(nosave bool) error {
	pid, pidErr := s.readPID()
	running := pidErr == nil && isRedisProcess(pid)
	if !running && !s.portOpen() {
		return nil // not running, e.g. after Kill
	}
	err := s.sendShutdown(nosave)
	if isDialError(err) && !running {
		return nil // exited meanwhile
	}
	if err != nil {
		return fmt.Errorf("shutdown redis-server on %s: %w", s.Addr(), err)
	}
	if pidErr != nil {
		return fmt.Errorf("shutdown: %w", pidErr)
	}
	if err := s.waitDown(pid); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// sendShutdown sends SHUTDOWN (or SHUTDOWN NOSAVE) over a fresh connection.
func (s *Server) sendShutdown(nosave bool) error {
	c := s.controlClient()
	defer func() { _ = c.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if nosave {
		return shutdownErr(c.ShutdownNoSave(ctx).Err())
	}
	return shutdownErr(c.Shutdown(ctx).Err())
}

// shutdownErr filters the error of a SHUTDOWN command. go-redis already
// maps the expected EOF to nil; a connection reset also means the server
// went away. Anything else (error reply, failed dial, timeout) is returned.
func shutdownErr(err error) error {
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	return err
}

// isDialError reports whether err comes from failing to connect.
func isDialError(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

// readPID reads the current process id from the pidfile.
func (s *Server) readPID() (int, error) {
	data, err := os.ReadFile(s.pidfile)
	if err != nil {
		return 0, fmt.Errorf("read pidfile: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, fmt.Errorf("parse pidfile %s: %w", s.pidfile, err)
	}
	return pid, nil
}

// logTail returns the last logTailBytes of the log file, for error messages.
func (s *Server) logTail() string {
	data, err := os.ReadFile(s.logfile)
	if err != nil {
		return fmt.Sprintf("\n(no redis log: %v)", err)
	}
	if len(data) > logTailBytes {
		data = data[len(data)-logTailBytes:]
	}
	return "\nredis log tail:\n" + string(data)
}

// controlClient returns a client for internal commands: no retries, one
// dial attempt.
func (s *Server) controlClient() *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr:            s.Addr(),
		DisableIdentity: true,
		MaxRetries:      -1,
		DialerRetries:   1,
		DialTimeout:     time.Second,
	})
}

// portOpen reports whether something accepts TCP connections on s.Addr().
func (s *Server) portOpen() bool {
	conn, err := net.DialTimeout("tcp", s.Addr(), 200*time.Millisecond)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

// waitDown waits until process pid has exited and the port is closed. The
// port check matters because a daemonized server is not our child: it may
// linger as a zombie leader while its other threads still hold the socket.
func (s *Server) waitDown(pid int) error {
	err := poll(exitTimeout, func() bool {
		return !processAlive(pid) && !s.portOpen()
	})
	if err != nil {
		return fmt.Errorf("redis-server pid %d / %s still up: %w", pid, s.Addr(), err)
	}
	return nil
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// Format: "pid (comm) state ...". comm may contain spaces or ')'.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// isRedisProcess reports whether pid is a live redis-server process, so we
// never signal an unrelated process that reused a stale pid.
func isRedisProcess(pid int) bool {
	if !processAlive(pid) {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && bytes.Contains(cmdline, []byte("redis-server"))
}

// poll calls done every pollInterval until it returns true or timeout
// elapses.
func poll(timeout time.Duration, done func() bool) error {
	deadline := time.Now().Add(timeout)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for range timer.C {
		if done() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s", timeout)
		}
		timer.Reset(pollInterval)
	}
	return nil
}
