package lag

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// benchBacklog seeds one partition with n entries of 100-byte payloads, one in every
// retryEvery of them a retry entry of group "a" (indexed and counted as the scripts do), and
// groups "a" (caught up), "b" (at 0-0: the whole backlog to deliver) and, with setID, "c"
// (moved by XGROUP SETID to the middle: Redis reports its lag unknown, so it is counted,
// bounded).
func benchBacklog(b *testing.B, client *redis.Client, space keys.Space, topic string, n, retryEvery int, setID bool) {
	b.Helper()
	ctx := context.Background()
	str := space.PartitionStream(topic, 0)
	body := strings.Repeat("x", 100)
	var mid string
	for done := 0; done < n; {
		pipe := client.Pipeline()
		cmds := make([]*redis.StringCmd, 0, 1000)
		for i := 0; i < 1000 && done < n; i, done = i+1, done+1 {
			cmds = append(cmds, pipe.XAdd(ctx, &redis.XAddArgs{Stream: str, Values: []string{"payload", body}}))
		}
		_, err := pipe.Exec(ctx)
		require.NoError(b, err)
		pipe = client.Pipeline()
		for i, c := range cmds {
			if (done-len(cmds)+i)%retryEvery == 0 {
				pipe.ZAdd(ctx, keys.RetryIndex(str, "a"), redis.Z{Member: streamid.Key(c.Val())})
				pipe.HIncrBy(ctx, keys.RetryCount(str), "a", 1)
			}
			if done-len(cmds)+i == n/2 {
				mid = c.Val()
			}
		}
		_, err = pipe.Exec(ctx)
		require.NoError(b, err)
	}
	require.NoError(b, client.XGroupCreate(ctx, str, "a", "$").Err())
	require.NoError(b, client.XGroupCreate(ctx, str, "b", "0").Err())
	if setID {
		require.NoError(b, client.XGroupCreate(ctx, str, "c", mid).Err())
	}
}

// BenchmarkRead100k reads the lag of the groups of a partition of 100,000 entries, 10,000 of
// them another group's retries (go test -run ^$ -bench Read100k ./internal/lag/): "a" and
// "b" (Redis reports their lag), then also "c" (Redis cannot: counted, bounded).
func BenchmarkRead100k(b *testing.B) {
	b.Run("reported", func(b *testing.B) { benchRead(b, false) })
	b.Run("counted", func(b *testing.B) { benchRead(b, true) })
}

func benchRead(b *testing.B, setID bool) {
	srv := redistest.Start(b)
	client := srv.Client(b)
	space := keys.New("", "")
	benchBacklog(b, client, space, "big", 100_000, 10, setID)
	ctx := context.Background()
	var trips countTrips
	client.AddHook(&trips)
	s, err := Read(ctx, client, space, "big", 1, "")
	require.NoError(b, err)
	for _, g := range s.Partitions[0].Groups {
		b.Logf("group %s: lag %d exact %v skipped %d oldest %s", g.Name, g.Lag, g.Exact, g.Skipped, g.Oldest)
	}
	b.Logf("retries held %d, round trips %d", s.Partitions[0].Retries, trips.n)
	mem, err := client.MemoryUsage(ctx, keys.RetryIndex(space.PartitionStream("big", 0), "a")).Result()
	require.NoError(b, err)
	b.Logf("retry index: %d bytes for 10,000 retries (%.0f bytes each)", mem, float64(mem)/10_000)
	b.ResetTimer()
	for range b.N {
		if _, err := Read(ctx, client, space, "big", 1, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScan10k is what the index saves: one bounded XRANGE of 10,000 entries after a
// position, the read a scan for other groups' retries would need per group and partition.
func BenchmarkScan10k(b *testing.B) {
	srv := redistest.Start(b)
	client := srv.Client(b)
	space := keys.New("", "")
	benchBacklog(b, client, space, "big", 100_000, 10, false)
	ctx := context.Background()
	str := space.PartitionStream("big", 0)
	b.ResetTimer()
	for range b.N {
		if err := client.XRangeN(ctx, str, "-", "+", ScanLimit).Err(); err != nil {
			b.Fatal(err)
		}
	}
}

// countTrips counts commands and pipelines sent.
type countTrips struct{ n int }

func (c *countTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *countTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.n++; return next(ctx, cmd) }
}

func (c *countTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { c.n++; return next(ctx, cmds) }
}
