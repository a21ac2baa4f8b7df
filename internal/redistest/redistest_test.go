package redistest_test

import (
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/streamq-dev/streamq/internal/redistest"
)

func TestStartAddrURL(t *testing.T) {
	s := redistest.Start(t)
	if !strings.HasPrefix(s.Addr(), "127.0.0.1:") || s.Addr() == "127.0.0.1:6379" {
		t.Fatalf("unexpected Addr %q", s.Addr())
	}
	if want := "redis://" + s.Addr(); s.URL() != want {
		t.Fatalf("URL = %q, want %q", s.URL(), want)
	}
	if err := s.Client(t).Ping(context.Background()).Err(); err != nil {
		t.Fatalf("PING: %v", err)
	}
}

func TestRestartKeepsDataViaAOF(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	mustSet(t, c.Set(ctx, "k", "v1", 0).Err())

	for i := 0; i < 2; i++ {
		if err := s.Restart(); err != nil {
			t.Fatalf("Restart #%d: %v", i, err)
		}
		assertValue(t, c.Get(ctx, "k").Val(), "v1")
	}
}

func TestRestartCommandKeepsData(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	mustSet(t, c.Set(ctx, "k", "v2", 0).Err())

	argv := s.RestartCommand()
	for i := 0; i < 2; i++ {
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("restart command #%d: %v: %s", i, err, out)
		}
		assertValue(t, c.Get(ctx, "k").Val(), "v2")
	}
	// Mixing both restart paths must keep working.
	if err := s.Restart(); err != nil {
		t.Fatalf("Restart after RestartCommand: %v", err)
	}
	assertValue(t, c.Get(ctx, "k").Val(), "v2")
}

func TestKillRefusesConnections(t *testing.T) {
	s := redistest.Start(t)
	if err := s.Kill(); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	conn, err := net.DialTimeout("tcp", s.Addr(), time.Second)
	if err == nil {
		_ = conn.Close()
		t.Fatalf("dial %s succeeded after Kill", s.Addr())
	}
	// A killed server can be brought back.
	if err := s.Restart(); err != nil {
		t.Fatalf("Restart after Kill: %v", err)
	}
}

func TestRestartConcurrentWithClients(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			_ = c.Incr(ctx, "n").Err() // errors expected while restarting
		}
	}()
	if err := s.Restart(); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	// The client reconnects on its own once the server is back.
	if err := c.Incr(context.Background(), "n").Err(); err != nil {
		t.Fatalf("INCR after Restart: %v", err)
	}
	cancel()
	<-done
}

func mustSet(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("SET: %v", err)
	}
}

func assertValue(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Fatalf("GET k = %q, want %q", got, want)
	}
}
