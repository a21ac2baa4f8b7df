package dashboard_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/dashboard"
	"github.com/streamq-dev/streamq/internal/fulltest"
)

// maxmemoryGroupJSON is what these tests read of a group page.
type maxmemoryGroupJSON struct {
	Health         healthJSON `json:"health"`
	OutagesUnknown []int      `json:"outagesUnknown"`
	OutageUnknown  string     `json:"outageUnknown"`
	Held           *struct {
		Unacked      int64  `json:"unacked"`
		UnackedBytes int64  `json:"unackedBytes"`
		Retries      int64  `json:"retries"`
		Cause        bool   `json:"cause"`
		Text         string `json:"text"`
	} `json:"held"`
	Partitions []struct {
		Outage *struct {
			Reason string `json:"reason"`
			Probes int    `json:"probesFailed"`
		} `json:"outage"`
		OutageUnknown string `json:"outageUnknown"`
	} `json:"partitions"`
}

func (h healthJSON) code(code string) *problemJSON {
	for i := range h.Problems {
		if h.Problems[i].Code == code {
			return &h.Problems[i]
		}
	}
	return nil
}

// TestGroupPageOutageAtMaxmemory: Redis fills during a downstream outage; the group page
// goes on showing the outage, its probes counting on (the record is written at maxmemory),
// never "running". Where Redis refuses every write, a group with no record says its outage
// state is unknown, on each partition and in its health.
func TestGroupPageOutageAtMaxmemory(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, e.adm.CreateTopic(e.ctx, "invoices", 1))
	e.publishRoundRobin("invoices", 3, 1)
	require.NoError(t, e.client.XGroupCreate(e.ctx, e.streamKey("invoices", 0), "reports", "0").Err()) // a group with no outage
	fulltest.Outage(t, e.client, "invoices", "ledger", "ledger: 503 Service Unavailable")
	s := e.serve(dashboard.Options{})
	var g maxmemoryGroupJSON
	require.Eventually(t, func() bool {
		s.getJSON("/api/topics/invoices/groups/ledger", &g)
		return g.Partitions[0].Outage != nil
	}, 20*time.Second, 50*time.Millisecond)
	fulltest.Fill(t, e.client)
	probes := g.Partitions[0].Outage.Probes
	require.Eventually(t, func() bool {
		s.getJSON("/api/topics/invoices/groups/ledger", &g)
		return g.Partitions[0].Outage != nil && g.Partitions[0].Outage.Probes >= probes+2
	}, 20*time.Second, 50*time.Millisecond, "the outage record is written at maxmemory")
	assert.Empty(t, g.OutagesUnknown)
	require.NotNil(t, g.Health.code("downstream-outage"), "%+v", g.Health)

	require.NoError(t, e.client.ConfigSet(e.ctx, "min-replicas-to-write", "1").Err())
	t.Cleanup(func() { _ = e.client.ConfigSet(e.ctx, "min-replicas-to-write", "0").Err() })
	s.getJSON("/api/topics/invoices/groups/reports", &g)
	assert.Equal(t, []int{0}, g.OutagesUnknown)
	assert.Equal(t, "outage state unknown: Redis refuses writes", g.Partitions[0].OutageUnknown)
	assert.Contains(t, g.OutageUnknown, "NOREPLICAS")
	p := g.Health.code("outage-unknown")
	require.NotNil(t, p, "%+v", g.Health)
	assert.True(t, strings.HasPrefix(p.Text, "outage state unknown: Redis refuses writes on partition 0"), p.Text)
}

// TestDashboardNamesWhoHoldsTheMemory: at maxmemory, with two topics and three groups, the
// topic whose group holds back the most leads with the critical line naming that group; the
// other topic says, as a warning, because of which group Redis is full; the culprit's group
// page says how much it holds back, and a group behind elsewhere says its own share.
func TestDashboardNamesWhoHoldsTheMemory(t *testing.T) {
	e := newEnv(t)
	fulltest.MemoryScene(t, e.client, e.pub)
	fulltest.Fill(t, e.client)
	s := e.serve(dashboard.Options{})
	var topics struct {
		Topics []struct {
			Topic  string     `json:"topic"`
			Health healthJSON `json:"health"`
		} `json:"topics"`
	}
	s.getJSON("/api/topics", &topics)
	require.Len(t, topics.Topics, 2)
	assert.Equal(t, fulltest.Orders, topics.Topics[0].Topic, "the topic holding the memory first")
	orders, events := topics.Topics[0].Health, topics.Topics[1].Health
	full := orders.code("redis-full")
	require.NotNil(t, full, "%+v", orders)
	assert.Equal(t, "critical", full.Severity)
	assert.Contains(t, full.Text, "group audit holds back 400 unacked messages (~")
	assert.Contains(t, full.Text, "here, the most of any group")
	assert.Equal(t, "streamq stats orders audit", full.Command)
	other := events.code("redis-full")
	require.NotNil(t, other, "%+v", events)
	assert.Equal(t, "warning", other.Severity)
	assert.True(t, strings.HasPrefix(other.Text, "Redis is full because of group audit on topic orders (it holds back 400 unacked messages"), other.Text)

	var audit, mailer maxmemoryGroupJSON
	s.getJSON("/api/topics/orders/groups/audit", &audit)
	require.NotNil(t, audit.Held)
	assert.True(t, audit.Held.Cause)
	assert.Equal(t, int64(fulltest.OrdersCount), audit.Held.Unacked)
	assert.Greater(t, audit.Held.UnackedBytes, int64(fulltest.OrdersCount*fulltest.OrderSize))
	assert.True(t, strings.HasPrefix(audit.Held.Text, "holds back 400 unacked messages (~"), audit.Held.Text)
	assert.Contains(t, audit.Held.Text, "the most of any group")
	s.getJSON("/api/topics/events/groups/mailer", &mailer)
	require.NotNil(t, mailer.Held)
	assert.False(t, mailer.Held.Cause)
	assert.Equal(t, int64(fulltest.MailerBehind), mailer.Held.Unacked)
	assert.Equal(t, int64(fulltest.MailerRetries), mailer.Held.Retries)
	assert.Contains(t, mailer.Held.Text, "group audit on topic orders holds back the most")
}

// TestFiguresAtMaxmemory: while Redis refuses the history's writes, the publish rate of a
// dashboard that samples the topic comes from its own reads (it falls to 0 when publishes are
// refused, and says it is live), the charts run on to now with the span as a gap; a dashboard
// with no reads of its own marks the figures stale, with the time of the last sample.
func TestFiguresAtMaxmemory(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, e.adm.CreateTopic(e.ctx, "orders", 1))
	s := e.serve(dashboard.Options{SampleInterval: 100 * time.Millisecond, HistoryInterval: -1})
	var topic topicRatesJSON
	var rates gapRatesJSON
	require.Eventually(t, func() bool {
		e.publishRoundRobin("orders", 20, 1)
		s.getJSON("/api/topics/orders/rates", &rates)
		s.getJSON("/api/topics/orders", &topic)
		return len(rates.Points) >= 3 && topic.PublishRate != nil && *topic.PublishRate > 0
	}, 20*time.Second, 100*time.Millisecond, "a publish rate from the history")
	fulltest.Fill(t, e.client)
	require.Eventually(t, func() bool {
		s.getJSON("/api/topics/orders", &topic)
		return topic.Freshness.Live && topic.PublishRate != nil && *topic.PublishRate == 0
	}, 20*time.Second, 100*time.Millisecond, "the rate from live reads: nothing is published at maxmemory")
	assert.Contains(t, topic.Freshness.Text, "live: figures from this dashboard's reads; the history is not written since ")
	assert.Regexp(t, `^writes refused by Redis: .*OOM`, topic.Freshness.NotWritten)

	require.Eventually(t, func() bool {
		s.getJSON("/api/topics/orders/rates", &rates)
		last := rates.Points[len(rates.Points)-1].T
		return rates.NowMs-last > rates.GapAfterMs
	}, 20*time.Second, 100*time.Millisecond, "the chart runs on to now: the span without samples is a gap")
	assert.True(t, rates.Freshness.Stale, "the recorded history is stale")

	other := e.serve(dashboard.Options{SampleInterval: 100 * time.Millisecond, HistoryInterval: -1})
	other.getJSON("/api/topics/orders", &topic)
	require.True(t, topic.Freshness.Stale, "%+v", topic.Freshness)
	assert.False(t, topic.Freshness.Live)
	require.NotNil(t, topic.Freshness.LastSample)
	assert.Contains(t, topic.Freshness.Text, "stale: figures as of the last sample, "+topic.Freshness.LastSample.UTC().Format("2006-01-02 15:04:05 UTC"))
	assert.Positive(t, *topic.PublishRate, "the last rate the history has, marked stale")
}

type freshnessJSON struct {
	LastSample *time.Time `json:"lastSample"`
	Live       bool       `json:"live"`
	Stale      bool       `json:"stale"`
	NotWritten string     `json:"notWritten"`
	Text       string     `json:"text"`
}

type topicRatesJSON struct {
	PublishRate *float64      `json:"publishRate"`
	Freshness   freshnessJSON `json:"freshness"`
}

type gapRatesJSON struct {
	NowMs      int64         `json:"nowMs"`
	GapAfterMs int64         `json:"gapAfterMs"`
	Freshness  freshnessJSON `json:"freshness"`
	Points     []struct {
		T   int64 `json:"t"`
		Gap bool  `json:"gap"`
	} `json:"points"`
}

// TestDashboardNamesWhoHoldsTheMemoryAtTheHighWaterMark: above the high-water mark, before
// Redis is full, the topic whose group holds back the most warns of the memory naming that
// group; the other topic says because of which group the memory is high; nothing says full.
func TestDashboardNamesWhoHoldsTheMemoryAtTheHighWaterMark(t *testing.T) {
	e := newEnv(t)
	fulltest.MemoryScene(t, e.client, e.pub)
	fulltest.HighWater(t, e.client)
	s := e.serve(dashboard.Options{})
	var topics struct {
		Topics []struct {
			Topic  string     `json:"topic"`
			Health healthJSON `json:"health"`
		} `json:"topics"`
	}
	s.getJSON("/api/topics", &topics)
	require.Len(t, topics.Topics, 2)
	assert.Equal(t, fulltest.Orders, topics.Topics[0].Topic, "the topic holding the memory first")
	orders, events := topics.Topics[0].Health, topics.Topics[1].Health
	for _, h := range []healthJSON{orders, events} {
		assert.Nil(t, h.code("redis-full"), "not full yet: %+v", h)
	}
	high := orders.code("memory-high")
	require.NotNil(t, high, "%+v", orders)
	assert.Equal(t, "warning", high.Severity)
	assert.Contains(t, high.Text, "above the 80 % high-water mark of maxmemory")
	assert.Contains(t, high.Text, "; group audit holds back 400 unacked messages (~")
	assert.Equal(t, "streamq stats orders audit", high.Command)
	other := events.code("memory-high")
	require.NotNil(t, other, "%+v", events)
	assert.True(t, strings.HasPrefix(other.Text, "Redis memory is high because of group audit on topic orders (it holds back 400 unacked messages"), other.Text)

	var audit maxmemoryGroupJSON
	s.getJSON("/api/topics/orders/groups/audit", &audit)
	require.NotNil(t, audit.Held)
	assert.True(t, audit.Held.Cause)
	assert.Equal(t, int64(fulltest.OrdersCount), audit.Held.Unacked)
}
