package redistest_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/redistest"
)

// TestSentinelKillMasterPromotesReplica: the sentinels name the first node master, KillMaster
// kills it, WaitPromoted returns the replica once every sentinel names it, the failover and
// universal clients find it on their own and keep a write the replica confirmed before the
// kill, the restarted old master rejoins (WaitSettled), and a second kill promotes the other node.
func TestSentinelKillMasterPromotesReplica(t *testing.T) {
	s := redistest.StartSentinel(t)
	ctx := context.Background()
	addrs := s.Addrs()
	old, err := s.Master()
	if err != nil {
		t.Fatal(err)
	}
	if old != addrs[0] {
		t.Fatalf("sentinels name %s master, want the first node %s", old, addrs[0])
	}
	failover := s.FailoverClient(t)
	universal := s.UniversalClient(t)
	if _, ok := universal.(*redis.Client); !ok {
		t.Fatalf("UniversalClient is a %T, want the *redis.Client of NewFailoverClient", universal)
	}
	mustSet(t, failover.Set(ctx, "k", "v", 0).Err())
	// The replica confirms the write before the kill, so the failover keeps it.
	if n, err := failover.Wait(ctx, 1, 2*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 = %d, %v", n, err)
	}
	if got := universal.Get(ctx, "k").Val(); got != "v" {
		t.Fatalf("GET through the universal client = %q, want v", got)
	}

	killed, err := s.KillMaster()
	if err != nil {
		t.Fatal(err)
	}
	if killed != old {
		t.Fatalf("KillMaster killed %s, want %s", killed, old)
	}
	start := time.Now()
	promoted, err := s.WaitPromoted(old, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("replica %s promoted %s after the kill", promoted, time.Since(start).Round(time.Millisecond))
	if promoted != addrs[1] {
		t.Fatalf("promoted %s, want the replica %s", promoted, addrs[1])
	}
	if now, err := s.Master(); err != nil || now != promoted {
		t.Fatalf("Master() = %s, %v after the promotion, want %s", now, err, promoted)
	}
	for name, c := range map[string]redis.UniversalClient{"failover": failover, "universal": universal} {
		getEventually(t, c, name)
		if err := c.Set(ctx, "k2", name, 0).Err(); err != nil {
			t.Fatalf("SET through the %s client after the failover: %v", name, err)
		}
	}

	if err := s.Node(old).Restart(); err != nil {
		t.Fatalf("restart the old master: %v", err)
	}
	master, err := s.WaitSettled(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if master != promoted { // the sentinels failed over again while the old master restarted
		t.Logf("the sentinels settled on %s, not %s: a second failover on a busy machine", master, promoted)
	}
	if killed, err := s.KillMaster(); err != nil || killed != master { // a second kill finds the master
		t.Fatalf("second KillMaster killed %s, %v, want the settled master %s", killed, err, master)
	}
	other := addrs[0]
	if master == other {
		other = addrs[1]
	}
	if back, err := s.WaitPromoted(master, 30*time.Second); err != nil || back != other {
		t.Fatalf("second failover promoted %s, %v, want the other node %s", back, err, other)
	}
}

// getEventually reads k through c until the client found the promoted master.
func getEventually(t *testing.T, c redis.UniversalClient, name string) {
	t.Helper()
	var got string
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err = c.Get(context.Background(), "k").Result()
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil || got != "v" {
		t.Fatalf("GET k through the %s client after the failover = %q, %v, want v", name, got, err)
	}
}
