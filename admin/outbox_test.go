package admin_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/outboxstatus"
)

func outboxReport(id string, moved int64) outboxstatus.Report {
	return outboxstatus.Report{Relay: outboxstatus.Relay{ID: id, Host: "h", PID: 7, StartedAt: time.Now()},
		Table: "orders_outbox", Group: "streamq-outbox", Dialect: "postgres", Interval: 10 * time.Second,
		Measured: true, Pending: 4, OldestAge: 2 * time.Second, MovedSinceLastReport: moved}
}

// TestOutboxStatus: what relays reported is read back with ages by the server's clock; a
// relay silent for more than three of its intervals is not live, and an outbox whose
// relays all are shows Live false; unknown and invalid names are errors.
func TestOutboxStatus(t *testing.T) {
	e := newOpEnv(t)
	_, err := outboxstatus.Write(e.ctx, e.client, "", "orders_outbox", outboxReport("r1", 5))
	require.NoError(t, err)
	_, err = outboxstatus.Write(e.ctx, e.client, "", "orders_outbox", outboxReport("r2", 2))
	require.NoError(t, err)
	// r2 last reported ten minutes ago.
	old := time.Now().Add(-10 * time.Minute).UnixMilli()
	require.NoError(t, e.client.HSet(e.ctx, "streaming:mq:outbox:{orders_outbox}:relays", "r2",
		fmt.Sprintf(`{"host":"h","pid":8,"startedAt":%d,"reportedAt":%d,"intervalMs":10000,"moved":2}`, old, old)).Err())

	s, err := e.adm.OutboxStatus(e.ctx, "orders_outbox")
	require.NoError(t, err)
	assert.Equal(t, "orders_outbox", s.Name)
	assert.Equal(t, "postgres", s.Dialect)
	assert.True(t, s.Measured)
	assert.Equal(t, int64(4), s.Pending)
	assert.Equal(t, 2*time.Second, s.OldestAge)
	assert.Equal(t, int64(7), s.Moved)
	assert.True(t, s.Live)
	assert.Less(t, s.SinceReport, 5*time.Second)
	require.Len(t, s.Relays, 2)
	assert.True(t, s.Relays[0].Live)
	assert.False(t, s.Relays[1].Live, "silent for 10m with a 10s interval")
	assert.Greater(t, s.Relays[1].SinceReport, 9*time.Minute)

	// Every relay silent: the outbox is not live.
	require.NoError(t, e.client.HSet(e.ctx, "streaming:mq:outbox:{orders_outbox}:relays", "r1",
		fmt.Sprintf(`{"host":"h","pid":7,"startedAt":%d,"reportedAt":%d,"intervalMs":10000,"moved":5}`, old, old)).Err())
	require.NoError(t, e.client.HSet(e.ctx, "streaming:mq:outbox:{orders_outbox}", "reportedAt", old).Err())
	s, err = e.adm.OutboxStatus(e.ctx, "orders_outbox")
	require.NoError(t, err)
	assert.False(t, s.Live)
	assert.Greater(t, s.SinceReport, 9*time.Minute)

	_, err = outboxstatus.Write(e.ctx, e.client, "", "payments_outbox", outboxReport("r3", 1))
	require.NoError(t, err)
	all, err := e.adm.OutboxStatuses(e.ctx)
	require.NoError(t, err)
	require.Len(t, all, 2)
	assert.Equal(t, "orders_outbox", all[0].Name)
	assert.Equal(t, "payments_outbox", all[1].Name)

	_, err = e.adm.OutboxStatus(e.ctx, "nope")
	assert.True(t, errors.Is(err, admin.ErrOutboxNotFound), "%v", err)
	_, err = e.adm.OutboxStatus(e.ctx, "bad name")
	assert.True(t, errors.Is(err, admin.ErrInvalidArgument), "%v", err)
	require.NoError(t, e.client.Del(e.ctx, "streaming:mq:outbox:{payments_outbox}").Err())
	all, err = e.adm.OutboxStatuses(e.ctx)
	require.NoError(t, err)
	assert.Len(t, all, 1, "an expired outbox is left out")
}
