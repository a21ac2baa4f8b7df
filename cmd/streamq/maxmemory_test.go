package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/dashboard"
	"github.com/streamq-dev/streamq/internal/fulltest"
	"github.com/streamq-dev/streamq/internal/keys"
)

// groupPage reads the dashboard's group page API of group on topic (a dashboard over the
// env's Redis).
func (e *cliEnv) groupPage(topic, group string, v any) {
	e.t.Helper()
	h, err := dashboard.New(e.client, dashboard.Options{})
	require.NoError(e.t, err)
	defer func() { _ = h.Close() }()
	srv := httptest.NewServer(h)
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL + "/api/topics/" + topic + "/groups/" + group)
	require.NoError(e.t, err)
	defer res.Body.Close()
	require.Equal(e.t, 200, res.StatusCode)
	require.NoError(e.t, json.NewDecoder(res.Body).Decode(v))
}

type outagePageJSON struct {
	OutagesUnknown []int  `json:"outagesUnknown"`
	OutageUnknown  string `json:"outageUnknown"`
	Partitions     []struct {
		Outage        *struct{ Reason string } `json:"outage"`
		OutageUnknown string                   `json:"outageUnknown"`
	} `json:"partitions"`
	Health struct {
		Problems []struct{ Code, Text string } `json:"problems"`
	} `json:"health"`
}

// TestOutageAtMaxmemoryEverywhere: Redis fills during a downstream outage. The lease holder's
// record still goes through at maxmemory, so streamq stats, admin.GroupStats and the group
// page all go on showing the outage, never "running"; and where Redis refuses every write, a
// group with no record reads "outage state unknown: Redis refuses writes" in all three.
func TestOutageAtMaxmemoryEverywhere(t *testing.T) {
	e := newCLIEnv(t)
	const topic = "invoices"
	require.NoError(t, e.adm.CreateTopic(e.ctx, topic, 1))
	require.NoError(t, e.pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("x"))))
	require.NoError(t, e.client.XGroupCreate(e.ctx, keys.New("", "").PartitionStream(topic, 0), "reports", "0").Err())
	fulltest.Outage(t, e.client, topic, "ledger", "ledger: 503 Service Unavailable")
	gs := waitStats(t, e, topic, "ledger", func(gs admin.GroupStats) bool { return gs.Outages == 1 })
	fulltest.Fill(t, e.client)
	probes := gs.Partitions[0].Outage.Probes
	gs = waitStats(t, e, topic, "ledger", func(gs admin.GroupStats) bool {
		return gs.Outages == 1 && gs.Partitions[0].Outage.Probes >= probes+2
	})
	assert.Zero(t, gs.OutagesUnknown, "admin: the outage, written at maxmemory")
	out := e.ok("stats", topic, "ledger")
	assert.Contains(t, out, "delivery: 1 of 1 partitions wait out a downstream outage\n", "the CLI")
	assert.Regexp(t, `partition 0 paused: downstream failing since .*: ledger: 503 Service Unavailable`, out)
	assert.NotContains(t, out, "delivery: running")
	var page outagePageJSON
	e.groupPage(topic, "ledger", &page)
	require.NotNil(t, page.Partitions[0].Outage, "the group page")
	assert.Equal(t, "ledger: 503 Service Unavailable", page.Partitions[0].Outage.Reason)

	require.NoError(t, e.client.ConfigSet(e.ctx, "min-replicas-to-write", "1").Err())
	t.Cleanup(func() { _ = e.client.ConfigSet(e.ctx, "min-replicas-to-write", "0").Err() })
	gs, err := e.adm.GroupStats(e.ctx, topic, "reports")
	require.NoError(t, err)
	assert.Equal(t, 1, gs.OutagesUnknown, "admin")
	assert.ErrorIs(t, gs.Partitions[0].OutageUnknown, admin.ErrWritesRefused)
	out = e.ok("stats", topic, "reports")
	assert.Regexp(t, `delivery: outage state unknown: Redis refuses writes \(partition 0: writes refused by Redis: NOREPLICAS[^\n]*\)\n`, out, "the CLI")
	var v statsView
	e.jsonOf(&v, "stats", topic, "reports")
	assert.Equal(t, 1, v.OutagesUnknown)
	assert.Contains(t, v.Partitions[0].OutageUnknown, "NOREPLICAS")
	e.groupPage(topic, "reports", &page)
	assert.Equal(t, []int{0}, page.OutagesUnknown, "the group page")
	assert.Equal(t, admin.OutageUnknownText, page.Partitions[0].OutageUnknown)
}

// TestInfoAndStatsNameWhoHoldsTheMemory: at maxmemory, with two topics and three groups,
// streamq info names on the topic holding the memory the group holding back the most, and on
// the other topic "Redis is full because of" that group; each lists what its groups hold back
// (unacked messages and retries, approximate sizes) and its dead letters apart; streamq stats
// says what its group holds back and whether it is the cause.
func TestInfoAndStatsNameWhoHoldsTheMemory(t *testing.T) {
	e := newCLIEnv(t)
	fulltest.MemoryScene(t, e.client, e.pub)
	fulltest.Fill(t, e.client)

	orders := e.ok("info", fulltest.Orders)
	assert.Regexp(t, `(?m)^the cause: group audit, here: 400 unacked \(~[\d.]+ MiB\)$`, orders)
	assert.Regexp(t, `(?m)^audit\s+400\s+[\d.]+ [KM]iB\s+0\s+0 B$`, orders)
	assert.Regexp(t, `(?m)^billing\s+0\s+0 B\s+0\s+0 B$`, orders)
	events := e.ok("info", fulltest.Events)
	assert.Regexp(t, `(?m)^Redis is full because of group audit on topic orders: 400 unacked \(~[\d.]+ MiB\)$`, events)
	assert.Regexp(t, fmt.Sprintf(`(?m)^mailer\s+%d\s+[\d.]+ [KM]?i?B\s+%d\s+[\d.]+ [KM]?i?B$`, fulltest.MailerBehind, fulltest.MailerRetries), events)
	assert.Regexp(t, fmt.Sprintf(`(?m)^\(dead letters\)\s+%d\s+[\d.]+ [KM]?i?B`, fulltest.DeadLetters), events)

	var info infoView
	e.jsonOf(&info, "info", fulltest.Events)
	require.NotNil(t, info.MemoryUse)
	require.NotNil(t, info.MemoryUse.Cause)
	assert.Equal(t, "audit", info.MemoryUse.Cause.Group)
	assert.Equal(t, int64(fulltest.DeadLetters), info.MemoryUse.DeadLetters)

	assert.Regexp(t, `\nmemory held back: 400 unacked \(~[\d.]+ MiB\), the most of any group\nRedis is full because of this group\n`, e.ok("stats", fulltest.Orders, fulltest.Audit))
	assert.Regexp(t, fmt.Sprintf(`\nmemory held back: %d unacked \(~[^)]+\), %d retries \(~[^)]+\)\nRedis is full because of group audit on topic orders: 400 unacked`, fulltest.MailerBehind, fulltest.MailerRetries),
		e.ok("stats", fulltest.Events, fulltest.Mailer))
}

// TestInfoNamesWhoHoldsTheMemoryAtTheHighWaterMark: above the high-water mark, before Redis is
// full, info and stats name the group holding back the most already ("Redis memory is high
// because of ...").
func TestInfoNamesWhoHoldsTheMemoryAtTheHighWaterMark(t *testing.T) {
	e := newCLIEnv(t)
	fulltest.MemoryScene(t, e.client, e.pub)
	fulltest.HighWater(t, e.client)
	events := e.ok("info", fulltest.Events)
	assert.Contains(t, events, "above the 80 % high-water mark")
	assert.Regexp(t, `(?m)^Redis memory is high because of group audit on topic orders: 400 unacked \(~[\d.]+ MiB\)$`, events)
	assert.Regexp(t, `(?m)^the cause: group audit, here: 400 unacked`, e.ok("info", fulltest.Orders))
	assert.Contains(t, e.ok("stats", fulltest.Orders, fulltest.Audit), "\nRedis memory is high because of this group\n")
	assert.NotContains(t, e.ok("info", fulltest.Orders), "Redis is full")
}

// TestStatsNamesMembers: stats names each live member with its host and PID and, once the
// last one left, that member and when.
func TestStatsNamesMembers(t *testing.T) {
	e := newCLIEnv(t)
	const topic, group = "orders", "billing"
	require.NoError(t, e.adm.CreateTopic(e.ctx, topic, 1))
	cfg := fulltest.Config(e.client, group, 1)
	cfg.Membership.ConsumerName = "worker-1"
	sub, err := streamq.NewSubscriber(cfg, watermill.NopLogger{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	_, err = sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	waitStats(t, e, topic, group, func(gs admin.GroupStats) bool { return len(gs.Members) == 1 })
	host, _ := os.Hostname()
	me := fmt.Sprintf("worker-1 (%s pid %d)", host, os.Getpid())
	assert.Contains(t, e.ok("stats", topic, group), "members: "+me+"\ndelivery: running\n")

	require.NoError(t, sub.Close())
	out := e.ok("stats", topic, group)
	assert.Regexp(t, `members: none live\nlast member: `+regexp.QuoteMeta(me)+` left \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ \(\d+s ago\)\n`, out)
	assert.Contains(t, out, "delivery: no live member: nothing is delivered\n")
	var v statsView
	e.jsonOf(&v, "stats", topic, group)
	require.NotNil(t, v.LastMember)
	assert.Equal(t, os.Getpid(), v.LastMember.PID)
	assert.True(t, v.LastMember.Left)
}

func waitStats(t *testing.T, e *cliEnv, topic, group string, ok func(admin.GroupStats) bool) admin.GroupStats {
	t.Helper()
	var gs admin.GroupStats
	require.Eventually(t, func() bool {
		var err error
		gs, err = e.adm.GroupStats(e.ctx, topic, group)
		return err == nil && ok(gs)
	}, 30*time.Second, 50*time.Millisecond)
	return gs
}
