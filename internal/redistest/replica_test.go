package redistest_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/redistest"
)

// A replica started by StartReplica acknowledges the master's writes (WAIT counts it) until
// it is paused, and again once resumed.
func TestReplicaPauseAndResume(t *testing.T) {
	ctx := context.Background()
	master := redistest.Start(t)
	replica := redistest.StartReplica(t, master)
	c := master.Client(t)

	wait := func() int64 {
		t.Helper()
		pipe := c.Pipeline()
		pipe.Set(ctx, "k", "v", 0)
		n := redis.NewIntCmd(ctx, "wait", 1, 200) // WAIT 1 200 (ms), after the SET on its connection
		_ = pipe.Process(ctx, n)
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatalf("SET + WAIT: %v", err)
		}
		return n.Val()
	}
	if n := wait(); n != 1 {
		t.Fatalf("WAIT 1 with the replica running = %d, want 1", n)
	}
	if got, err := replica.Client(t).Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Fatalf("replica GET k = %q, %v; want v", got, err)
	}

	if err := replica.Pause(); err != nil {
		t.Fatal(err)
	}
	if n := wait(); n != 0 {
		t.Fatalf("WAIT 1 with the replica paused = %d, want 0", n)
	}
	if err := replica.Resume(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for wait() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the resumed replica never acknowledged again")
		}
	}
}

// A server left paused by its test is resumed and shut down by the cleanups.
func TestPausedServerIsCleanedUp(t *testing.T) {
	var addr string
	t.Run("leaves it paused", func(t *testing.T) {
		s := redistest.Start(t)
		addr = s.Addr()
		if err := s.Pause(); err != nil {
			t.Fatal(err)
		}
	})
	if len(running([]string{addr})) > 0 {
		t.Fatalf("%s still accepts connections after the test's cleanups", addr)
	}
}
