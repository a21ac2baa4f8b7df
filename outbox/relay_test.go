package outbox_test

import (
	"context"
	"database/sql"
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	prom "github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/streamq-dev/streamq/outbox"
)

// metricValue reads the value of the series name{outbox=...} of reg (0 when absent): a
// gauge's or counter's value, a histogram's sample count.
func metricValue(t *testing.T, reg *prom.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name || len(f.GetMetric()) == 0 {
			continue
		}
		return value(f.GetMetric()[0])
	}
	return 0
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetHistogram() != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return 0
}

// TestTwoRelaysMoveEachMessageOnce: two relays of one outbox and group run at once while
// transactions commit; every message is in the stream once, and the two relays' moved
// counters add up to the number of messages: no message was published twice (which
// streamq's idempotency would have hidden in the stream).
func TestTwoRelaysMoveEachMessageOnce(t *testing.T) {
	forEachDB(t, func(t *testing.T, d outbox.Dialect) {
		const n, topic = 600, "shared"
		e := newEnv(t, d)
		regs := []*prom.Registry{prom.NewRegistry(), prom.NewRegistry()}
		for i, reg := range regs {
			cfg := e.fastRelay()
			cfg.Registerer, cfg.RelayID, cfg.BatchSize = reg, "relay-"+strconv.Itoa(i), 20
			e.startRelay(cfg)
		}
		var batch []*message.Message
		for i := range n {
			batch = append(batch, keyed("k"+strconv.Itoa(i%7), i/7))
			if len(batch) == 5 {
				e.publishTx(true, topic, batch...)
				batch = nil
			}
		}
		e.waitMoved(topic, n, 60*time.Second)
		counts := e.uuidCounts(topic)
		assert.Len(t, counts, n)
		for _, c := range counts {
			require.Equal(t, 1, c)
		}
		moved := [2]float64{}
		for i, reg := range regs {
			moved[i] = metricValue(t, reg, "streamq_outbox_moved_total")
		}
		t.Logf("relay-0 moved %v, relay-1 moved %v", moved[0], moved[1])
		assert.Equal(t, float64(n), moved[0]+moved[1], "published once each, over both relays")
	})
}

// TestRelayMetricsAndStatus: the relay's metrics show the rows waiting before it runs
// (the age of the oldest too), then the moved count, publish latencies and no row waiting;
// admin.OutboxStatus shows the same, with the relay live, and the relay still listed but
// not live once it is closed and silent.
func TestRelayMetricsAndStatus(t *testing.T) {
	forEachDB(t, func(t *testing.T, d outbox.Dialect) {
		e := newEnv(t, d)
		const topic = "metered"
		for i := range 5 {
			e.publishTx(true, topic, keyed("k", i))
		}
		lag, err := outbox.ReadLag(e.ctx, e.db, d, e.table, "")
		require.NoError(t, err)
		assert.Equal(t, int64(5), lag.Pending)
		assert.Less(t, lag.OldestAge, time.Minute)

		reg := prom.NewRegistry()
		cfg := e.fastRelay()
		cfg.Registerer, cfg.RelayID = reg, "the-relay"
		r := e.startRelay(cfg)
		e.waitMoved(topic, 5, 30*time.Second)
		require.Eventually(t, func() bool {
			s, err := e.adm.OutboxStatus(e.ctx, e.table)
			return err == nil && s.Moved == 5 && s.Measured && s.Pending == 0
		}, 10*time.Second, 20*time.Millisecond)
		assert.Equal(t, 5.0, metricValue(t, reg, "streamq_outbox_moved_total"))
		assert.Equal(t, 5.0, metricValue(t, reg, "streamq_outbox_publish_seconds"), "one latency sample per publish")
		assert.Equal(t, 0.0, metricValue(t, reg, "streamq_outbox_pending_rows"))
		assert.Equal(t, 0.0, metricValue(t, reg, "streamq_outbox_oldest_age_seconds"))
		assert.Equal(t, 0.0, metricValue(t, reg, "streamq_outbox_publish_errors_total"))

		s, err := e.adm.OutboxStatus(e.ctx, e.table)
		require.NoError(t, err)
		assert.True(t, s.Live)
		assert.Equal(t, e.table, s.Table)
		assert.Equal(t, outbox.DefaultConsumerGroup, s.Group)
		assert.Equal(t, string(d), s.Dialect)
		require.Len(t, s.Relays, 1)
		assert.Equal(t, "the-relay", s.Relays[0].ID)
		assert.Equal(t, int64(5), s.Relays[0].Moved)
		require.NoError(t, r.Close())
		s, err = e.adm.OutboxStatus(e.ctx, e.table)
		require.NoError(t, err)
		assert.Equal(t, int64(5), s.Moved, "the last report on Close adds nothing twice")
	})
}

// TestRelayLifecycle: Close is idempotent, before and after Run; Run after Close is
// ErrClosed, a second Run ErrRunning; Run on missing tables is ErrNoTable; cancelling Run's
// context stops it with nil; and no goroutine of the relay outlives Close.
func TestRelayLifecycle(t *testing.T) {
	forEachDBSerial(t, func(t *testing.T, d outbox.Dialect) {
		e := newEnv(t, d)
		// A database handle of the test's own, closed before the leak check: its
		// connections' goroutines are database/sql's, not the relay's.
		driver, source := dsn(d)
		db, err := sql.Open(driver, source)
		require.NoError(t, err)
		defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
		defer db.Close()
		cfg := e.fastRelay()
		cfg.DB = db

		never, err := outbox.NewRelay(cfg)
		require.NoError(t, err)
		require.NoError(t, never.Close())
		require.NoError(t, never.Close())
		assert.ErrorIs(t, never.Run(e.ctx), outbox.ErrClosed)

		r, err := outbox.NewRelay(cfg)
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- r.Run(e.ctx) }()
		e.publishTx(true, "life", keyed("k", 0))
		e.waitMoved("life", 1, 30*time.Second)
		assert.ErrorIs(t, r.Run(e.ctx), outbox.ErrRunning)
		require.NoError(t, r.Close())
		require.NoError(t, <-done)
		require.NoError(t, r.Close())

		ctx, cancel := context.WithCancel(e.ctx)
		r, err = outbox.NewRelay(cfg)
		require.NoError(t, err)
		go func() { done <- r.Run(ctx) }()
		e.publishTx(true, "life", keyed("k", 1))
		e.waitMoved("life", 2, 30*time.Second)
		cancel()
		require.NoError(t, <-done, "a cancelled Run returns nil")
		require.NoError(t, r.Close())

		missing := cfg
		missing.Table = "obx_missing_" + randomHex(4)
		r, err = outbox.NewRelay(missing)
		require.NoError(t, err)
		assert.ErrorIs(t, r.Run(e.ctx), outbox.ErrNoTable)
		require.NoError(t, r.Close())
	})
}

// TestRelayConfigValidation: what NewRelay refuses, each with ErrInvalidConfig.
func TestRelayConfigValidation(t *testing.T) {
	// NewRelay sends nothing: a client of a port nobody listens on and a DB never opened do.
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	base := func() outbox.RelayConfig {
		return outbox.RelayConfig{DB: &sql.DB{}, Dialect: outbox.MySQL, Redis: client}
	}
	cases := []struct {
		name string
		edit func(*outbox.RelayConfig)
	}{
		{"no DB", func(c *outbox.RelayConfig) { c.DB = nil }},
		{"no Redis", func(c *outbox.RelayConfig) { c.Redis = nil }},
		{"no dialect", func(c *outbox.RelayConfig) { c.Dialect = "" }},
		{"unknown dialect", func(c *outbox.RelayConfig) { c.Dialect = "oracle" }},
		{"bad table", func(c *outbox.RelayConfig) { c.Table = "drop table;" }},
		{"long table", func(c *outbox.RelayConfig) { c.Table = string(make([]byte, 56)) }},
		{"group makes a bad name", func(c *outbox.RelayConfig) { c.ConsumerGroup = "a group" }},
		{"bad name", func(c *outbox.RelayConfig) { c.Name = "{x}" }},
		{"Publisher.Client set", func(c *outbox.RelayConfig) { c.Publisher.Client = client }},
		{"Publisher.Idempotency set", func(c *outbox.RelayConfig) { c.Publisher.Idempotency.Window = time.Hour }},
		{"window below -1", func(c *outbox.RelayConfig) { c.IdempotencyWindow = -2 }},
		{"negative batch", func(c *outbox.RelayConfig) { c.BatchSize = -1 }},
		{"negative poll", func(c *outbox.RelayConfig) { c.PollInterval = -time.Second }},
		{"report below -1", func(c *outbox.RelayConfig) { c.ReportInterval = -2 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base()
			tc.edit(&cfg)
			_, err := outbox.NewRelay(cfg)
			assert.ErrorIs(t, err, outbox.ErrInvalidConfig)
		})
	}
	r, err := outbox.NewRelay(base())
	require.NoError(t, err, "the base config is valid")
	require.NoError(t, r.Close())
}
