package partition_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestCacheKeepsKnownCountWhenRefreshFails: when the periodic re-read of a known topic's
// partition count fails (the master of the topic's slot is failing over, the server
// restarts), Partitions keeps returning the count it knows, so publishing to partitions on
// healthy masters goes on; it reads again shortly after. A topic it never loaded still fails.
func TestCacheKeepsKnownCountWhenRefreshFails(t *testing.T) {
	srv := redistest.Start(t)
	client := srv.Client(t)
	ctx := context.Background()
	clk := &clock{now: time.Unix(1_000_000, 0)}
	space := keys.New("", "")
	cache := partition.NewCache(partition.NewRegistry(client, space), 4, time.Minute, clk.Now)
	if n, err := cache.Partitions(ctx, "t"); err != nil || n != 4 {
		t.Fatalf("first Partitions = %d, %v; want 4, nil", n, err)
	}

	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	clk.Add(2 * time.Minute) // a refresh is due, and Redis is down
	if n, err := cache.Partitions(ctx, "t"); err != nil || n != 4 {
		t.Fatalf("Partitions during the outage = %d, %v; want the known count 4, nil", n, err)
	}
	if _, err := cache.Partitions(ctx, "never-seen"); err == nil {
		t.Fatal("Partitions of a topic never loaded succeeded while Redis is down")
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := client.HSet(ctx, space.Meta("t"), "partitionCount", 6).Err(); err != nil {
		t.Fatal(err)
	}
	clk.Add(5 * time.Second) // well before another full refresh period, after the retry delay
	if n, err := cache.Partitions(ctx, "t"); err != nil || n != 6 {
		t.Fatalf("Partitions after Redis is back = %d, %v; want the grown count 6 read again", n, err)
	}
}
