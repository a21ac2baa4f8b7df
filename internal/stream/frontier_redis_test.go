package stream_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// The commit frontier an ack batch moves (stream.Ack): the highest id a group acked on a
// partition, never moved backwards, and never by a holder fenced out of the partition's lease.

// commitOf reads group's commit frontier on partition p of topic ("" when it has none).
func commitOf(t testing.TB, client redis.UniversalClient, topic string, p int, group string) string {
	t.Helper()
	v, err := client.HGet(context.Background(), keys.New("", "").Commit(topic, p), group).Result()
	if errors.Is(err, redis.Nil) {
		return ""
	}
	require.NoError(t, err)
	return v
}

// groupPending counts the entries of stream pending for group.
func groupPending(t testing.TB, client redis.UniversalClient, stream, group string) int64 {
	t.Helper()
	p, err := client.XPending(context.Background(), stream, group).Result()
	require.NoError(t, err)
	return p.Count
}

// frontierFixture is a partition with entries pending for group "g" and a lease held by
// token "owner", for calling stream.Ack directly.
type frontierFixture struct {
	client *redis.Client
	topic  string
	ids    []string // in stream order
	keys   stream.AckKeys
	token  string
}

// newFrontierFixture appends entries with explicit ids chosen so that comparing them as
// strings gives the wrong order (9-x < 10-x, x-9 < x-10), reads them into the group's
// pending list and takes the lease.
func newFrontierFixture(t *testing.T) *frontierFixture {
	t.Helper()
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	space := keys.New("", "")
	f := &frontierFixture{client: client, topic: "fenced", token: "owner"}
	str := space.PartitionStream(f.topic, 0)
	for _, ms := range []int{9, 10, 99, 100, 1000} {
		for seq := 0; seq < 40; seq++ {
			f.ids = append(f.ids, fmt.Sprintf("%d-%d", ms, seq))
		}
	}
	_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, id := range f.ids {
			p.XAdd(ctx, &redis.XAddArgs{Stream: str, ID: id, Values: []any{"k", id}})
		}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, client.XGroupCreate(ctx, str, "g", "0-0").Err())
	read, err := client.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{str, ">"}, Count: int64(len(f.ids))}).Result()
	require.NoError(t, err)
	require.Len(t, read[0].Messages, len(f.ids))
	leaseKey := space.Lease(f.topic, 0, "g")
	ok, err := lease.New(client, "owner", "n", time.Minute).Acquire(ctx, leaseKey, f.token)
	require.NoError(t, err)
	require.True(t, ok)
	f.keys = stream.AckKeys{Lease: leaseKey, Stream: str, Commit: space.Commit(f.topic, 0), PayloadIndex: space.PayloadIndex(f.topic, 0)}
	return f
}

func (f *frontierFixture) ack(ctx context.Context, token string, ids ...string) error {
	space := keys.New("", "")
	entries := make([]stream.Acked, len(ids))
	for i, id := range ids {
		entries[i] = stream.Acked{ID: id, AckSet: space.Acks(f.topic, 0, id)}
	}
	return stream.Ack(ctx, f.client, stream.AckBatch{Keys: f.keys, Token: token, Group: "g", Policy: "none",
		AckSetTTL: time.Minute, Frontier: stream.Highest(entries), Entries: entries})
}

func (f *frontierFixture) frontier(t testing.TB) string {
	t.Helper()
	return commitOf(t, f.client, f.topic, 0, "g")
}

// parseStreamID splits a stream id "ms-seq" into its numbers.
func parseStreamID(id string) (ms, seq uint64, ok bool) {
	a, b, found := strings.Cut(id, "-")
	m, err1 := strconv.ParseUint(a, 10, 64)
	s, err2 := strconv.ParseUint(b, 10, 64)
	return m, s, found && err1 == nil && err2 == nil
}

func TestCommitFrontierNeverMovesBackwards(t *testing.T) {
	t.Parallel()
	f := newFrontierFixture(t)
	ctx := context.Background()
	const goroutines, batches = 20, 50

	var (
		mu      sync.Mutex
		maxID   string
		workers sync.WaitGroup
	)
	done := make(chan struct{})
	sampled := make(chan []string, 1)
	go func() { // sample the frontier while the acks run
		var seen []string
		for {
			select {
			case <-done:
				sampled <- seen
				return
			default:
			}
			v, err := f.client.HGet(ctx, f.keys.Commit, "g").Result()
			if err == nil && (len(seen) == 0 || seen[len(seen)-1] != v) {
				seen = append(seen, v)
			}
		}
	}()
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		workers.Add(1)
		go func(seed uint64) {
			defer workers.Done()
			rng := rand.New(rand.NewPCG(seed, 7))
			for b := 0; b < batches; b++ {
				// A random subset, in random order, of the ids below a bound that
				// rises with the batch number: the frontier climbs while older ids keep
				// being acked out of order by other goroutines.
				hi := (b + 1) * len(f.ids) / batches
				perm := rng.Perm(hi)[:1+rng.IntN(min(hi, 20))]
				batch := make([]string, len(perm))
				for i, k := range perm {
					batch[i] = f.ids[k]
				}
				if err := f.ack(ctx, f.token, batch...); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				for _, id := range batch {
					if maxID == "" || streamid.Less(maxID, id) {
						maxID = id
					}
				}
				mu.Unlock()
			}
		}(uint64(g))
	}
	workers.Wait()
	close(done)
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	seen := <-sampled

	assert.Equal(t, maxID, f.frontier(t), "the frontier is the highest id ever acked")
	require.NotEmpty(t, seen)
	for _, v := range seen {
		_, _, ok := parseStreamID(v)
		require.True(t, ok, "the frontier held %q, not a stream id", v)
	}
	for i := 1; i < len(seen); i++ {
		require.False(t, streamid.Less(seen[i], seen[i-1]), "frontier moved backwards: %s after %s (observed %v)", seen[i], seen[i-1], seen)
	}
	t.Logf("observed %d distinct frontier values, final %s", len(seen), maxID)
	assert.GreaterOrEqual(t, len(seen), 2, "the sampler should see the frontier climb at least once (more on an idle machine)")

	// Acking an older id later leaves it where it is.
	require.NoError(t, f.ack(ctx, f.token, f.ids[0]))
	assert.Equal(t, maxID, f.frontier(t))
}

func TestCommitFrontierOverwritesLegacyValue(t *testing.T) {
	t.Parallel()
	f := newFrontierFixture(t)
	ctx := context.Background()
	require.NoError(t, f.client.HSet(ctx, f.keys.Commit, "g", "garbage").Err())
	require.NoError(t, f.ack(ctx, f.token, f.ids[3], f.ids[1]))
	assert.Equal(t, f.ids[3], f.frontier(t), "a value that is not a stream id is overwritten")
	// Numeric, not string, order: 10-0 is above 9-39.
	require.NoError(t, f.ack(ctx, f.token, f.ids[40], f.ids[39]))
	assert.Equal(t, "10-0", f.frontier(t))
	require.NoError(t, f.ack(ctx, f.token, f.ids[2], f.ids[0]))
	assert.Equal(t, "10-0", f.frontier(t))
}

func TestCommitFrontierFencedAck(t *testing.T) {
	t.Parallel()
	f := newFrontierFixture(t)
	ctx := context.Background()
	require.NoError(t, f.ack(ctx, f.token, f.ids[5]))
	require.Equal(t, f.ids[5], f.frontier(t))
	pending := groupPending(t, f.client, f.keys.Stream, "g")

	err := f.ack(ctx, "intruder", f.ids[len(f.ids)-1], f.ids[6])
	require.Error(t, err)
	assert.True(t, errors.Is(err, fence.ErrLeaseLost), "got %v", err)
	assert.Equal(t, f.ids[5], f.frontier(t), "a fenced-out ack must not move the frontier")
	assert.Equal(t, pending, groupPending(t, f.client, f.keys.Stream, "g"), "a fenced-out ack must not XACK")

	// Once the lease is gone entirely, the old owner is fenced out too.
	require.NoError(t, f.client.Del(ctx, f.keys.Lease).Err())
	err = f.ack(ctx, f.token, f.ids[7])
	assert.True(t, errors.Is(err, fence.ErrLeaseLost), "got %v", err)
	assert.Equal(t, f.ids[5], f.frontier(t))
}
