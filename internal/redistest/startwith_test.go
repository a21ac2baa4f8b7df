package redistest_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamq-dev/streamq/internal/redistest"
)

func TestStartWithAppliesExtraConfig(t *testing.T) {
	s := redistest.StartWith(t, redistest.AOFAlways)
	got, err := s.Client(t).ConfigGet(context.Background(), "appendfsync").Result()
	if err != nil {
		t.Fatalf("CONFIG GET: %v", err)
	}
	if got["appendfsync"] != "always" {
		t.Fatalf("appendfsync = %q, want always", got["appendfsync"])
	}
	// Restart keeps the extra lines (they are in the config file).
	if err := s.Restart(); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	got, _ = s.Client(t).ConfigGet(context.Background(), "appendfsync").Result()
	if got["appendfsync"] != "always" {
		t.Fatalf("after Restart appendfsync = %q, want always", got["appendfsync"])
	}
}

// watchdogChildEnv makes TestWatchdogChild start servers, write their addresses to the file
// named by the variable and die without running cleanups.
const watchdogChildEnv = "REDISTEST_WATCHDOG_CHILD_ADDR_FILE"

// TestWatchdogChild is the child process of TestWatchdogKillsServerOfDeadTest; it does
// nothing in a normal run.
func TestWatchdogChild(t *testing.T) {
	path := os.Getenv(watchdogChildEnv)
	if path == "" {
		return
	}
	// Every way of starting a server: StartWith, Start, a Sentinel deployment's data nodes
	// and sentinels, and a cluster's nodes.
	addrs := []string{redistest.StartWith(t, redistest.AOFAlways).Addr(), redistest.Start(t).Addr()}
	sentinel := redistest.StartSentinel(t)
	addrs = append(append(addrs, sentinel.Addrs()...), sentinel.SentinelAddrs()...)
	if _, err := exec.LookPath("redis-cli"); err == nil || redistest.RequireRedis() {
		addrs = append(addrs, redistest.StartCluster(t, 3, 0).Addrs()...)
	}
	if err := os.WriteFile(path, []byte(strings.Join(addrs, "\n")), 0o600); err != nil {
		t.Fatalf("write addr: %v", err)
	}
	os.Exit(3) // as a panic on -timeout would: no t.Cleanup runs
}

// A test process that dies without cleaning up does not leave its redis-server behind.
func TestWatchdogKillsServerOfDeadTest(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil && !redistest.RequireRedis() {
		t.Skip("redis-server not found on PATH")
	}
	path := filepath.Join(t.TempDir(), "addr")
	cmd := exec.Command(os.Args[0], "-test.run=^TestWatchdogChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), watchdogChildEnv+"="+path)
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 3 {
		t.Fatalf("child exited with %d (%v), want 3: %s", code, err, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("child wrote no address: %v: %s", err, out)
	}
	addrs := strings.Fields(string(data))
	if len(addrs) < 2 {
		t.Fatalf("child wrote %q, want the addresses of its servers", data)
	}
	deadline := time.Now().Add(10 * time.Second)
	ticker := time.NewTicker(20 * time.Millisecond)
	defer ticker.Stop()
	for range ticker.C {
		addrs = running(addrs)
		if len(addrs) == 0 {
			return // the watchdogs killed them all
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-servers on %v still running 10s after their test died", addrs)
		}
	}
}

// running returns the addresses that still accept connections.
func running(addrs []string) []string {
	var out []string
	for _, addr := range addrs {
		conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = conn.Close()
			out = append(out, addr)
		}
	}
	return out
}
