package outboxstatus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/outboxstatus"
	"github.com/streamq-dev/streamq/internal/redistest"
)

func relay(id string) outboxstatus.Relay {
	return outboxstatus.Relay{ID: id, Host: "host-" + id, PID: 42, StartedAt: time.UnixMilli(1_700_000_000_000)}
}

func report(id string, pending int64, moved int64) outboxstatus.Report {
	return outboxstatus.Report{Relay: relay(id), Table: "orders_outbox", Group: "relay", Dialect: "mysql",
		Interval: 10 * time.Second, Measured: true, Pending: pending, OldestAge: 1500 * time.Millisecond,
		MovedSinceLastReport: moved}
}

// TestWriteRead: two relays report on one outbox; Read shows the latest measurement, the
// moved total over both relays, each relay's own total, and the server's clock.
func TestWriteRead(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)

	_, found, err := outboxstatus.Read(ctx, rdb, "", "orders_outbox")
	require.NoError(t, err)
	assert.False(t, found, "nothing reported yet")

	_, err = outboxstatus.Write(ctx, rdb, "", "orders_outbox", report("a", 10, 5))
	require.NoError(t, err)
	_, err = outboxstatus.Write(ctx, rdb, "", "orders_outbox", report("b", 7, 0))
	require.NoError(t, err)
	at, err := outboxstatus.Write(ctx, rdb, "", "orders_outbox", report("a", 3, 4))
	require.NoError(t, err)
	unmeasured := report("b", 0, 1)
	unmeasured.Measured = false
	_, err = outboxstatus.Write(ctx, rdb, "", "orders_outbox", unmeasured)
	require.NoError(t, err)

	s, found, err := outboxstatus.Read(ctx, rdb, "", "orders_outbox")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, "orders_outbox", s.Table)
	assert.Equal(t, "relay", s.Group)
	assert.Equal(t, "mysql", s.Dialect)
	assert.True(t, s.Measured)
	assert.Equal(t, int64(3), s.Pending, "an unmeasured report keeps the last measurement")
	assert.Equal(t, 1500*time.Millisecond, s.OldestAge)
	assert.Equal(t, at, s.MeasuredAt)
	assert.Equal(t, int64(10), s.Moved, "5+0+4+1")
	assert.Equal(t, "b", s.ReportedBy)
	assert.Equal(t, 10*time.Second, s.Interval)
	assert.WithinDuration(t, time.Now(), s.Now, 5*time.Second)
	require.Len(t, s.Relays, 2)
	assert.Equal(t, "a", s.Relays[0].ID)
	assert.Equal(t, int64(9), s.Relays[0].Moved)
	assert.Equal(t, "host-a", s.Relays[0].Host)
	assert.Equal(t, 42, s.Relays[0].PID)
	assert.Equal(t, time.UnixMilli(1_700_000_000_000), s.Relays[0].StartedAt)
	assert.Equal(t, int64(1), s.Relays[1].Moved)

	ttl := rdb.PTTL(ctx, "streaming:mq:outbox:{orders_outbox}").Val()
	assert.Greater(t, ttl, outboxstatus.KeyTTL-time.Minute, "the status expires a week after the last report")
	assert.Greater(t, rdb.PTTL(ctx, "streaming:mq:outbox:{orders_outbox}:relays").Val(), outboxstatus.KeyTTL-time.Minute)

	names, err := outboxstatus.Names(ctx, rdb, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"orders_outbox"}, names)
}

// TestPrefixAndNames: the control prefix applies to every key; names are sorted; a name
// that would break the key layout is refused.
func TestPrefixAndNames(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	for _, name := range []string{"b", "a:g"} {
		_, err := outboxstatus.Write(ctx, rdb, "app", name, report("r", 0, 0))
		require.NoError(t, err)
	}
	names, err := outboxstatus.Names(ctx, rdb, "app")
	require.NoError(t, err)
	assert.Equal(t, []string{"a:g", "b"}, names)
	assert.Equal(t, int64(1), rdb.Exists(ctx, "app:outbox:{a:g}").Val())
	names, err = outboxstatus.Names(ctx, rdb, "")
	require.NoError(t, err)
	assert.Empty(t, names, "the default prefix holds nothing")

	_, err = outboxstatus.Write(ctx, rdb, "", "bad{name}", report("r", 0, 0))
	assert.True(t, errors.Is(err, keys.ErrInvalidName), "%v", err)
	_, _, err = outboxstatus.Read(ctx, rdb, "", "")
	assert.True(t, errors.Is(err, keys.ErrInvalidName), "%v", err)
}

// TestUnparseableRelayEntry: a relay entry that is not the JSON report.lua writes is left
// out by Read and removed by the next report.
func TestUnparseableRelayEntry(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	_, err := outboxstatus.Write(ctx, rdb, "", "o", report("a", 1, 1))
	require.NoError(t, err)
	require.NoError(t, rdb.HSet(ctx, "streaming:mq:outbox:{o}:relays", "junk", "not json").Err())
	s, _, err := outboxstatus.Read(ctx, rdb, "", "o")
	require.NoError(t, err)
	require.Len(t, s.Relays, 1)
	_, err = outboxstatus.Write(ctx, rdb, "", "o", report("a", 1, 1))
	require.NoError(t, err)
	assert.False(t, rdb.HExists(ctx, "streaming:mq:outbox:{o}:relays", "junk").Val())
}

// TestWriteReadOnCluster: the status keys share the outbox's slot and the registry is a
// command of its own, so Write and Read work on a Redis Cluster.
func TestWriteReadOnCluster(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.StartCluster(t, 3, 0).Client(t)
	for _, name := range []string{"orders_outbox", "payments_outbox", "a:b"} {
		_, err := outboxstatus.Write(ctx, rdb, "", name, report("r", 2, 3))
		require.NoError(t, err)
	}
	names, err := outboxstatus.Names(ctx, rdb, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"a:b", "orders_outbox", "payments_outbox"}, names)
	for _, name := range names {
		s, found, err := outboxstatus.Read(ctx, rdb, "", name)
		require.NoError(t, err)
		require.True(t, found)
		assert.Equal(t, int64(3), s.Moved)
		require.Len(t, s.Relays, 1)
	}
}
