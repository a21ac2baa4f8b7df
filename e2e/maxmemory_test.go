package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/dashboard"
	"github.com/streamq-dev/streamq/internal/fulltest"
)

// TestDashboardAtMaxmemory drives the dashboard through a Redis that fills up: topic "orders"
// with group audit that never consumed (its member crashed: the group holding the memory) and
// group billing with no member, published to until Redis refuses; topic "events" with group
// mailer behind and group notify waiting out a downstream outage. At maxmemory the topic page
// leads with the critical line naming audit, its publish rate comes from the dashboard's own
// reads (0, marked live) and its charts show the span without samples as a gap; the other
// topic says because of which group Redis is full; audit's page says how much it holds back;
// notify's page still shows its outage. STREAMQ_SCREENSHOTS=dir writes dashboard-full.png
// (the Topics page), dashboard-full-topic.png and dashboard-full-group.png.
func TestDashboardAtMaxmemory(t *testing.T) {
	b := startBrowser(t)
	e := newEnv(t)
	fulltest.MemoryScene(t, e.client, e.pub)
	e.crashed(fulltest.Orders, fulltest.Audit, "audit-worker-3", 9*time.Minute)
	fulltest.Outage(t, e.client, fulltest.Events, "notify", "mailgun: 503 Service Unavailable")
	require.Eventually(t, func() bool {
		s, err := e.adm.GroupStats(e.ctx, fulltest.Events, "notify")
		return err == nil && s.Outages == 1
	}, 20*time.Second, 50*time.Millisecond)
	url := e.serve(dashboard.Options{RefreshInterval: 400 * time.Millisecond, SampleInterval: 200 * time.Millisecond, HistoryInterval: -1})

	b.open(url + "/#/topics/orders")
	stop := e.publishUntilFull(fulltest.Orders)
	b.waitFor(`Number(document.querySelector('[data-chart="throughput"] svg')?.dataset.points) >= 25`, "a history of the traffic")
	fulltest.Fill(t, e.client)
	stop()
	b.waitFor(`Number(document.querySelector('[data-chart="lag"] svg')?.dataset.gaps) >= 1 &&
		document.querySelector('#stat-rate [data-fresh="live"]') !== null &&
		document.querySelector('#topic-health [data-code="redis-full"]') !== null`, "Redis full, the gap, and the rate from live reads")
	b.waitFor(`Number(document.querySelector('[data-chart="lag"] svg rect.gap')?.getAttribute('width')) > 120`, "a gap of some seconds")
	t.Run("topic page", func(t *testing.T) { fullTopicPage(t, b.with(t)) })
	t.Run("topics page", func(t *testing.T) { fullTopicsPage(t, b.with(t), url) })
	t.Run("culprit's group page", func(t *testing.T) { fullGroupPage(t, b.with(t), url) })
	t.Run("outage at maxmemory", func(t *testing.T) { outageAtMaxmemory(t, b.with(t), url) })
	b.requireNoProblems()
}

// fullTopicPage checks the topic page of "orders" at maxmemory.
func fullTopicPage(t *testing.T, b *browser) {
	block := `#topic-health [data-field="health"]`
	assert.Equal(t, "critical", eval[string](b, `document.querySelector('`+block+`').dataset.state`))
	full := eval[string](b, `document.querySelector('`+block+` [data-code="redis-full"] [data-field="problem"]').textContent`)
	assert.Regexp(t, `group audit holds back \d+ unacked messages \(~[\d.]+ MiB\) here, the most of any group$`, full)
	rate := eval[string](b, `document.getElementById('stat-rate').textContent`)
	assert.True(t, strings.HasPrefix(rate, "0live reads"), "the publish rate from live reads, not the last recorded one: %q", rate)
	assert.Contains(t, eval[string](b, `document.querySelector('[data-field="freshness"]').textContent`),
		"live: figures from this dashboard's reads; the history is not written since ")
	assert.Contains(t, eval[string](b, `document.querySelector('[data-field="history-span"]').textContent`), "Shaded: no samples recorded")
	grows := `#topic-health [data-code="lag-growing"]`
	if eval[bool](b, `document.querySelector('`+grows+`') !== null`) {
		assert.NotContains(t, eval[string](b, `document.querySelector('`+grows+` [data-field="next"]').textContent`), "add members",
			"billing has no member: the step is to start one")
	}
	assert.Contains(t, eval[string](b, `document.querySelector('tr[data-group="audit"] [data-field="held"]').textContent`), "MiB")
	if dir := os.Getenv("STREAMQ_SCREENSHOTS"); dir != "" {
		fullScreenshot(t, b, filepath.Join(dir, "dashboard-full-topic.png"))
	}
}

// fullTopicsPage checks the Topics page at maxmemory: the topic holding the memory first and
// critical, the other a warning that names the cause.
func fullTopicsPage(t *testing.T, b *browser, url string) {
	b.open(url + "/#/")
	b.waitFor(`document.querySelectorAll('tr[data-topic]').length === 2`, "two topics")
	order := eval[[]string](b, `[...document.querySelectorAll('tr[data-topic]')].map((tr) => tr.dataset.topic)`)
	assert.Equal(t, []string{"orders", "events"}, order)
	full := `tr[data-problems-of="orders"] [data-code="redis-full"]`
	assert.Equal(t, "critical", eval[string](b, `document.querySelector('`+full+`').className`), "the critical line stands on the topic holding the memory")
	other := `tr[data-problems-of="events"] [data-code="redis-full"]`
	assert.Equal(t, "warning", eval[string](b, `document.querySelector('`+other+`').className`))
	assert.Regexp(t, `^Redis is full because of group audit on topic orders \(it holds back \d+ unacked messages`,
		eval[string](b, `document.querySelector('`+other+` [data-field="problem"]').textContent`))
	assert.Contains(t, eval[string](b, `document.querySelector('tr[data-topic="orders"] [data-field="publish-rate"]').textContent`), "live reads")
	if dir := os.Getenv("STREAMQ_SCREENSHOTS"); dir != "" {
		fullScreenshot(t, b, filepath.Join(dir, "dashboard-full.png"))
	}
}

// fullGroupPage checks audit's page: how much it holds back, the cause, the last member.
func fullGroupPage(t *testing.T, b *browser, url string) {
	b.open(url + "/#/topics/orders/groups/audit")
	b.waitFor(`document.querySelector('[data-field="held"][data-cause="1"]') !== null`, "what audit holds back")
	held := eval[string](b, `document.querySelector('[data-field="held"]').title`)
	assert.Regexp(t, `^holds back \d+ unacked messages \(~[\d.]+ MiB\), the most of any group`, held)
	assert.Regexp(t, `^~[\d.]+ MiB\d+ unacked · the most of any group$`, eval[string](b, `document.querySelector('[data-field="held"]').textContent`))
	full := eval[string](b, `document.querySelector('#group-health [data-code="redis-full"] [data-field="problem"]').textContent`)
	assert.Regexp(t, `group audit holds back \d+ unacked messages \(~[\d.]+ MiB\) here, the most of any group$`, full, "the group page leads with it")
	assert.True(t, strings.HasPrefix(eval[string](b, `document.querySelector('[data-field="retention"]').textContent`), "holds ~"),
		"the retention card is not green while the group holds the memory")
	none := eval[string](b, `document.querySelector('#group-health [data-code="no-live-member"] [data-field="detail"]').textContent`)
	assert.Equal(t, "last member: audit-worker-3 ("+crashedHost+" pid "+strconv.Itoa(crashedPID)+"), its heartbeats stopped", none)
	assert.Equal(t, "audit-worker-3 ("+crashedHost+" pid "+strconv.Itoa(crashedPID)+")", eval[string](b, `document.querySelector('[data-field="last-member"]').textContent`))
	if dir := os.Getenv("STREAMQ_SCREENSHOTS"); dir != "" {
		screenshot(t, b, filepath.Join(dir, "dashboard-full-group.png"))
	}
}

// outageAtMaxmemory checks notify's page: at maxmemory it still shows the outage, not
// "running".
func outageAtMaxmemory(t *testing.T, b *browser, url string) {
	b.open(url + "/#/topics/events/groups/notify")
	b.waitFor(`document.querySelector('[data-field="partition-delivery"] .warn') !== null`, "the paused partition")
	assert.Regexp(t, `^paused: downstream failing since `, eval[string](b, `document.querySelector('[data-field="partition-delivery"]').textContent`))
	assert.Equal(t, "1 paused", eval[string](b, `document.getElementById('stat-delivery').textContent`))
	assert.NotContains(t, eval[string](b, `document.querySelector('[data-field="pause-state"]').textContent`), "Running")
}

// publishUntilFull publishes 10 orders every 100 ms to topic until stop is called; publishes
// refused because Redis is full are expected (ErrRedisFull), any other error fails the test.
func (e *env) publishUntilFull(topic string) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			msgs := make([]*message.Message, 10)
			for j := range msgs {
				msgs[j] = message.NewMessage(watermill.NewUUID(), []byte(`{"order":`+strconv.Itoa(i*10+j)+`}`))
			}
			if err := e.pub.Publish(topic, msgs...); err != nil && !errors.Is(err, streamq.ErrRedisFull) {
				e.t.Errorf("publish: %v", err)
			}
		}
	}()
	var once bool
	stop = func() {
		if !once {
			once = true
			close(done)
			<-finished
		}
	}
	e.t.Cleanup(stop)
	return stop
}
