package redistest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/streamq-dev/streamq/internal/redistest"
)

func TestStartClusterServesEverySlot(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	client := c.Client(t)
	ctx := context.Background()
	masters, err := c.Masters()
	if err != nil {
		t.Fatal(err)
	}
	if len(masters) != 3 {
		t.Fatalf("masters = %v, want 3", masters)
	}
	used := map[string]bool{}
	for i := 0; i < 30; i++ {
		key := fmt.Sprintf("k%d", i)
		mustSet(t, client.Set(ctx, key, "v", 0).Err())
		slot, err := client.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		m, err := c.MasterOf(int(slot))
		if err != nil {
			t.Fatal(err)
		}
		used[m] = true
	}
	if len(used) != 3 {
		t.Fatalf("30 keys landed on masters %v, want all 3", used)
	}
}

func TestClusterKillMasterFailsOver(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	client := c.Client(t)
	ctx := context.Background()
	mustSet(t, client.Set(ctx, "k", "v", 0).Err())
	slot, err := client.ClusterKeySlot(ctx, "k").Result()
	if err != nil {
		t.Fatal(err)
	}
	old, err := c.MasterOf(int(slot))
	if err != nil {
		t.Fatal(err)
	}
	// A replica confirms the write before the kill, so the failover keeps it.
	if err := client.Do(ctx, "WAIT", 1, 2000).Err(); err != nil {
		t.Fatalf("WAIT: %v", err)
	}
	if err := c.KillMaster(old); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := c.WaitOK(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("failed over in %s", time.Since(start))
	now, err := c.MasterOf(int(slot))
	if err != nil {
		t.Fatal(err)
	}
	if now == old {
		t.Fatalf("slot %d still served by the killed master %s", slot, old)
	}
	// go-redis reloads its slot map on MOVED or every ClusterStateReloadInterval, not on a
	// refused connection: ask for a reload now that the cluster is ok.
	client.ReloadState(ctx)
	var got string
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err = client.Get(ctx, "k").Result()
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	assertValue(t, got, "v")
	ranges, err := c.Slots()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range ranges {
		for _, replica := range r.Replicas {
			if err := c.KillMaster(replica); err == nil {
				t.Fatalf("KillMaster(%s) killed a replica", replica)
			}
		}
	}
}
