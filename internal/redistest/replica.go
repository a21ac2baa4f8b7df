package redistest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// syncTimeout bounds how long StartReplica waits for the replica to be in sync.
const syncTimeout = 20 * time.Second

// StartReplica starts a redis-server like StartWith (extra lines written after the defaults)
// that replicates master ("replicaof"), and waits until the replica acknowledges the master's
// writes: a WAIT on the master then counts it. It is stopped by t.Cleanup like any Server.
// The master's repl-diskless-sync-delay is set to 0 first, so that the full sync starts at
// once instead of after the default 5 s wait for more replicas.
func StartReplica(t testing.TB, master *Server, extra ...string) *Server {
	t.Helper()
	if err := master.configSet("repl-diskless-sync-delay", "0"); err != nil {
		t.Fatalf("redistest: %v", err)
	}
	lines := append([]string{"replicaof 127.0.0.1 " + strconv.Itoa(master.port)}, extra...)
	s := StartWith(t, lines...)
	if err := master.waitReplicaOnline(s.port); err != nil {
		t.Fatalf("redistest: %v%s", err, s.logTail())
	}
	if err := master.waitReplicaAcks(); err != nil {
		t.Fatalf("redistest: %v%s", err, s.logTail())
	}
	return s
}

// syncProbeKey is written and deleted by waitReplicaAcks; no key is left behind.
const syncProbeKey = "redistest:replica-sync-probe"

// waitReplicaAcks writes a probe key and WAITs until one replica acknowledged it, then
// deletes it the same way. An online replica is not yet acknowledging: after a diskless sync
// the master streams commands to it only from its first REPLCONF ACK, sent once a second.
func (s *Server) waitReplicaAcks() error {
	c := s.controlClient()
	defer func() { _ = c.Close() }()
	for _, write := range []func(ctx context.Context, p redis.Pipeliner){
		func(ctx context.Context, p redis.Pipeliner) { p.Set(ctx, syncProbeKey, "1", 0) },
		func(ctx context.Context, p redis.Pipeliner) { p.Del(ctx, syncProbeKey) },
	} {
		var acked int64
		var lastErr error
		err := poll(syncTimeout, func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			wait := redis.NewIntCmd(ctx, "wait", 1, 100) // WAIT 1 100ms, after the write on its connection
			_, lastErr = c.Pipelined(ctx, func(p redis.Pipeliner) error {
				write(ctx, p)
				return p.Process(ctx, wait)
			})
			acked = wait.Val()
			return lastErr == nil && acked >= 1
		})
		if err != nil {
			//nolint:errorlint // lastErr is detail and may be nil (the WAIT answered 0): %w would print %!w(<nil>)
			return fmt.Errorf("replica of %s never acknowledged a write: %w (WAIT %d, last error: %v)", s.Addr(), err, acked, lastErr)
		}
	}
	return nil
}

// configSet sets a configuration parameter of the running server (CONFIG SET).
func (s *Server) configSet(param, value string) error {
	c := s.controlClient()
	defer func() { _ = c.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.ConfigSet(ctx, param, value).Err(); err != nil {
		return fmt.Errorf("CONFIG SET %s %s on %s: %w", param, value, s.Addr(), err)
	}
	return nil
}

// waitReplicaOnline polls INFO replication until a replica on port is "state=online".
func (s *Server) waitReplicaOnline(port int) error {
	c := s.controlClient()
	defer func() { _ = c.Close() }()
	want := ",port=" + strconv.Itoa(port) + ",state=online,"
	var last string
	err := poll(syncTimeout, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		last, _ = c.Info(ctx, "replication").Result()
		return strings.Contains(last, want)
	})
	if err != nil {
		return fmt.Errorf("replica on port %d not in sync with %s: %w (INFO replication: %q)", port, s.Addr(), err, last)
	}
	return nil
}

// Pause stops the server with SIGSTOP, the way a process stalls (a long GC pause, a frozen
// VM): its connections stay open, nothing is answered and, for a replica, nothing is
// acknowledged to its master, until Resume. It returns once the kernel reports the process
// stopped. t.Cleanup resumes a server left paused, so that it can be shut down. Restart and
// Kill must not be called on a paused server.
func (s *Server) Pause() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, err := s.readPID()
	if err != nil {
		return fmt.Errorf("pause: %w", err)
	}
	if !isRedisProcess(pid) {
		return fmt.Errorf("pause: pid %d is not a running redis-server", pid)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("pause redis-server pid %d: %w", pid, err)
	}
	if !s.resumeOnCleanup {
		s.resumeOnCleanup = true
		s.t.Cleanup(func() { _ = s.Resume() }) // runs before the server's own cleanup
	}
	if err := poll(exitTimeout, func() bool { return processState(pid) == 'T' }); err != nil {
		return fmt.Errorf("pause: redis-server pid %d did not stop: %w", pid, err)
	}
	return nil
}

// Resume continues a server stopped by Pause (SIGCONT). Resuming a running server is a no-op.
func (s *Server) Resume() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, err := s.readPID()
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if !isRedisProcess(pid) {
		return nil // gone meanwhile: nothing to resume
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("resume redis-server pid %d: %w", pid, err)
	}
	return nil
}

// processState is the state letter of /proc/PID/stat ('R', 'S', 'T' stopped, 'Z' ...), 0
// when it cannot be read.
func processState(pid int) byte {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := bytes.LastIndexByte(stat, ')')
	if err != nil || i < 0 || i+2 >= len(stat) {
		return 0
	}
	return stat[i+2]
}
