package e2e

import (
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
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/dashboard"
)

// backlog is how many messages "orders" holds in the incident.
const backlog = 6000

// deadCount is how many dead letters "payments" holds; replayedCount of them were replayed.
const (
	deadCount     = 60
	replayedCount = 3
)

// TestDashboardIncident drives the dashboard through an incident: "orders" with a backlog of
// 6,000 and group "audit" with no live member, group "billing" consuming; "payments" with
// 60 dead letters arriving (3 of them replayed); "quiet" healthy. A first dashboard records
// history and is closed before a second one serves the pages, so the charts show what
// happened before anybody looked.
func TestDashboardIncident(t *testing.T) {
	b := startBrowser(t)
	e := newEnv(t)
	incident(t, e)
	recordHistoryBefore(t, e)
	opts := dashboard.Options{RefreshInterval: 400 * time.Millisecond, SampleInterval: 500 * time.Millisecond,
		HistoryInterval: -1, AllowWrites: true}
	url := e.serve(opts)

	t.Run("topics page worst first", func(t *testing.T) { topicsInIncident(t, b.with(t), e.with(t), url) })
	t.Run("history there on open, one colour per group", func(t *testing.T) { chartsOnOpen(t, b.with(t), url) })
	t.Run("dead letters paged, filtered, searched", func(t *testing.T) { deadLetterBrowser(t, b.with(t), url) })
	t.Run("message browser", func(t *testing.T) { messageBrowser(t, b.with(t), e.with(t), url) })
	t.Run("reset offset preview", func(t *testing.T) { resetPreview(t, b.with(t), e.with(t), url) })
	b.requireNoProblems()
}

// incident sets up the three topics.
func incident(t *testing.T, e *env) {
	require.NoError(t, e.adm.CreateTopic(e.ctx, "orders", 4))
	q, err := e.adm.QueueInfo(e.ctx, "orders")
	require.NoError(t, err)
	for _, p := range q.PerPartition {
		require.NoError(t, e.client.XGroupCreateMkStream(e.ctx, p.Stream, "audit", "0-0").Err())
	}
	for i := 0; i < backlog; i += 500 {
		msgs := make([]*message.Message, 500)
		for j := range msgs {
			n := i + j
			msgs[j] = message.NewMessage("order-"+strconv.Itoa(n), []byte(`{"order":`+strconv.Itoa(n)+`}`))
			msgs[j].Metadata.Set(streamq.PartitionKeyMetadata, "customer-"+strconv.Itoa(n%40))
		}
		require.NoError(t, e.pub.Publish("orders", msgs...))
	}
	e.consume("orders", "billing", func(m *message.Message) { m.Ack() })

	require.NoError(t, e.adm.CreateTopic(e.ctx, "payments", 2))
	reasons := []string{"card declined", "gateway timeout", "fraud suspected"}
	var letters []admin.DeadLetter
	for i := range deadCount {
		d, err := e.adm.AddDeadLetter(e.ctx, admin.NewDeadLetter{Topic: "payments", Partition: i % 2,
			UUID: "pay-" + strconv.Itoa(i), Group: []string{"workers", "mailer"}[i%2], Reason: reasons[i%3],
			Payload: []byte(`{"payment":` + strconv.Itoa(i) + `}`)})
		require.NoError(t, err)
		letters = append(letters, d)
	}
	for _, d := range letters[:replayedCount] {
		_, err := e.adm.ReplayDeadLetter(e.ctx, "payments", d.Partition, d.ID, admin.ReplayOptions{})
		require.NoError(t, err)
	}

	require.NoError(t, e.adm.CreateTopic(e.ctx, "quiet", 1))
	e.consume("quiet", "reporting", func(m *message.Message) { m.Ack() })
	require.NoError(t, e.pub.Publish("quiet", message.NewMessage(watermill.NewUUID(), []byte("hello"))))
}

// recordHistoryBefore runs a dashboard nobody looks at until it recorded 6 samples of
// "orders", then closes it.
func recordHistoryBefore(t *testing.T, e *env) {
	h, err := dashboard.New(e.client, dashboard.Options{HistoryInterval: 200 * time.Millisecond, SampleInterval: 200 * time.Millisecond})
	require.NoError(t, err)
	defer func() { require.NoError(t, h.Close()) }()
	require.Eventually(t, func() bool {
		s, err := e.adm.History(e.ctx, "orders", time.Hour)
		return err == nil && len(s) >= 6
	}, 30*time.Second, 50*time.Millisecond, "the first dashboard never recorded history")
}

// topicsInIncident checks the Topics page sorts the critical topic first and names every
// problem, and writes the screenshots.
func topicsInIncident(t *testing.T, b *browser, e *env, url string) {
	b.open(url + "/#/")
	b.waitFor(`document.querySelectorAll('tr[data-topic]').length === 3`, "three topics")
	gl, err := e.adm.GroupLag(e.ctx, "orders", "audit")
	require.NoError(t, err)
	require.Equal(t, int64(backlog), gl.Lag)
	b.waitFor(`document.querySelector('tr[data-topic="payments"] [data-code="dead-letters-arriving"]') !== null`, "dead letters arriving")
	order := eval[[]string](b, `[...document.querySelectorAll('tr[data-topic]')].map((tr) => tr.dataset.topic + ':' + tr.dataset.health)`)
	assert.Equal(t, []string{"orders:critical", "payments:warning", "quiet:ok"}, order, "worst first")
	row := `tr[data-topic="orders"]`
	assert.Equal(t, thousands(backlog)+"audit", eval[string](b, `document.querySelector('`+row+` [data-field="worst-lag"]').textContent`))
	assert.NotEqual(t, "—", eval[string](b, `document.querySelector('`+row+` [data-field="lag-age"]').textContent`), "the age of the oldest waiting message")
	assert.Equal(t, "0 live members", eval[string](b, `document.querySelector('`+row+` [data-group="audit"] [data-field="members"]').textContent`))
	assert.Equal(t, "1 live member", eval[string](b, `document.querySelector('`+row+` [data-group="billing"] [data-field="members"]').textContent`))
	assert.Contains(t, eval[string](b, `document.querySelector('`+row+` [data-code="no-live-member"]').textContent`),
		"group audit: no live member: "+strconv.Itoa(backlog)+" messages waiting")
	dlq := eval[string](b, `document.querySelector('tr[data-topic="payments"] [data-field="dlq"]').textContent`)
	assert.Equal(t, strconv.Itoa(deadCount)+"+"+strconv.Itoa(deadCount)+" in 5 min", dlq)
	if dir := os.Getenv("STREAMQ_SCREENSHOTS"); dir != "" {
		screenshot(t, b, filepath.Join(dir, "dashboard-incident.png"))
		b.open(url + "/#/topics/orders")
		b.waitFor(`Number(document.querySelector('[data-chart="lag"] svg')?.dataset.points) >= 6`, "the chart")
		screenshot(t, b, filepath.Join(dir, "dashboard-incident-topic.png"))
	}
}

// chartsOnOpen opens the topic page of "orders": its charts hold the history recorded before
// the page opened, each group in one colour in both charts, the published band under them.
func chartsOnOpen(t *testing.T, b *browser, url string) {
	opened := time.Now().UnixMilli()
	b.open(url + "/#/topics/orders")
	points := eval[int](b, `Number(document.querySelector('[data-chart="lag"] svg').dataset.points)`)
	assert.GreaterOrEqual(t, points, 5, "history at the first refresh")
	assert.Contains(t, eval[string](b, `document.querySelector('[data-field="history-span"]').textContent`), "History kept in Redis")
	first := eval[float64](b, `Number(document.querySelector('[data-chart="lag"] svg').dataset.first)`)
	assert.Less(t, int64(first), opened-500, "the oldest point is from before the page opened")
	stroke := func(chart, series string) string {
		return eval[string](b, `getComputedStyle(document.querySelector('[data-chart="`+chart+`"] path[data-series="`+series+`"]')).stroke`)
	}
	swatch := func(chart, series string) string {
		return eval[string](b, `getComputedStyle(document.querySelector('[data-chart="`+chart+`"] .legend-item[data-series="`+series+`"] .swatch')).backgroundColor`)
	}
	for _, g := range []string{"billing", "audit"} {
		assert.Equal(t, stroke("lag", g), stroke("throughput", g+" consumed"), "%s keeps its colour", g)
		assert.Equal(t, swatch("lag", g), swatch("throughput", g+" consumed"), "%s keeps its colour in the legends", g)
	}
	assert.NotEqual(t, stroke("lag", "billing"), stroke("lag", "audit"))
	width := func(series string) float64 {
		return eval[float64](b, `parseFloat(getComputedStyle(document.querySelector('[data-chart="throughput"] path[data-series="`+series+`"]')).strokeWidth)`)
	}
	assert.Greater(t, width("published"), 2*width("billing consumed"), "the published band is wider than a consumed line")
	order := eval[[]string](b, `[...document.querySelectorAll('[data-chart="throughput"] path.line')].map((p) => p.dataset.series)`)
	require.NotEmpty(t, order)
	assert.Equal(t, "published", order[0], "drawn first: the consumed lines go on top of the band, never under a line")
}

// fillIn sets an input's value and fires its input event, as typing does.
func (b *browser) fillIn(css, value string) {
	b.t.Helper()
	require.True(b.t, eval[bool](b, `(() => { const el = document.querySelector('`+css+`'); el.value = `+strconv.Quote(value)+
		`; el.dispatchEvent(new Event('input')); return true; })()`))
}

// rows is what the table of the page shows, one string per row (its data attributes).
const rowsJS = `[...document.querySelectorAll('tr[data-id]')].map((tr) => tr.dataset.partition + '/' + tr.dataset.id)`

// deadLetterBrowser pages through the 60 dead letters, filters them and searches them.
func deadLetterBrowser(t *testing.T, b *browser, url string) {
	b.open(url + "/#/topics/payments/dlq")
	b.waitFor(`document.querySelectorAll('tr[data-id]').length === 50`, "the first page of 50")
	first := eval[[]string](b, rowsJS)
	b.click(`[data-action="older"]`)
	b.waitFor(`document.querySelectorAll('tr[data-id]').length === 10`, "the second page")
	second := eval[[]string](b, rowsJS)
	assert.Len(t, unique(append(first, second...)), deadCount, "two pages, each letter once")
	assert.Equal(t, replayedCount, eval[int](b, `document.querySelectorAll('tr[data-replayed="yes"] [data-field="replayed"]').length`),
		"the oldest letters were replayed: marked on the last page")
	b.click(`[data-action="newer"]`)
	b.waitFor(`document.querySelectorAll('tr[data-id]').length === 50`, "back to the first page")

	b.fillIn(`input[name="group"]`, "mailer")
	b.waitFor(`document.querySelectorAll('tr[data-id]').length === 30`, "the mailer's 30")
	b.fillIn(`input[name="reason"]`, "FRAUD")
	b.waitFor(`document.querySelectorAll('tr[data-id]').length === 10`, "mailer and fraud: 10")
	reasons := eval[[]string](b, `[...document.querySelectorAll('tr[data-id] [data-field="reason"]')].map((td) => td.textContent)`)
	for _, r := range reasons {
		assert.Equal(t, "fraud suspected", r)
	}
	b.fillIn(`input[name="partition"]`, "0")
	b.waitFor(`document.querySelectorAll('tr[data-id]').length === 0 && document.querySelector('td.empty')?.textContent === 'No dead letter matches the filters.'`,
		"mailer letters are all on partition 1")
	b.click(`[data-action="clear-filters"]`)
	b.waitFor(`document.querySelectorAll('tr[data-id]').length === 50`, "filters cleared")
	b.fillIn(`input[name="q"]`, `"payment":42}`)
	b.waitFor(`document.querySelectorAll('tr[data-id]').length === 1`, "the search")
	assert.Equal(t, `{"payment":42}`, eval[string](b, `document.querySelector('tr[data-id] [data-field="payload"] pre').textContent`))
	b.fillIn(`input[name="until"]`, "2001-01-01T00:00")
	b.waitFor(`document.querySelectorAll('tr[data-id]').length === 0`, "nothing failed before 2001")
	b.click(`[data-action="clear-filters"]`)
	b.waitFor(`document.querySelectorAll('tr[data-id]').length === 50`, "filters cleared")
}

// messageBrowser narrows the messages of "orders" by partition, id range, key and UUID.
func messageBrowser(t *testing.T, b *browser, e *env, url string) {
	b.open(url + "/#/topics/orders")
	b.click(`[data-action="browse"]`)
	b.waitFor(`location.hash === '#/topics/orders/messages' && document.querySelectorAll('tr[data-id]').length === 25`, "the newest 25")
	cells := func(field string) []string {
		return eval[[]string](b, `[...document.querySelectorAll('tr[data-id] [data-field="`+field+`"]')].map((td) => td.textContent)`)
	}
	b.fillIn(`input[name="partition"]`, "2")
	b.waitFor(`[...document.querySelectorAll('tr[data-id]')].every((tr) => tr.dataset.partition === '2') && document.querySelectorAll('tr[data-id]').length === 25`, "partition 2")
	ids := e.ids("orders", 2)
	b.fillIn(`input[name="from"]`, ids[10])
	b.fillIn(`input[name="to"]`, ids[14])
	b.waitFor(`document.querySelectorAll('tr[data-id]').length === 5`, "an id range of 5")
	assert.Equal(t, []string{ids[14], ids[13], ids[12], ids[11], ids[10]}, cells("id"), "newest first")
	b.click(`[data-action="clear-filters"]`)
	b.fillIn(`input[name="key"]`, "customer-7")
	b.waitFor(`document.querySelectorAll('tr[data-id]').length === 25 && [...document.querySelectorAll('tr[data-id] [data-field="key"]')].every((td) => td.textContent === 'customer-7')`, "one key")
	b.click(`[data-action="older"]`)
	b.waitFor(`document.querySelector('[data-field="pager"]').textContent.startsWith('Page 2')`, "the next page of the key")
	b.click(`[data-action="clear-filters"]`)
	b.fillIn(`input[name="uuid"]`, "order-4242")
	b.waitFor(`document.querySelectorAll('tr[data-id]').length === 1`, "one UUID")
	assert.Equal(t, `{"order":4242}`, eval[string](b, `document.querySelector('tr[data-id] [data-field="payload"] pre').textContent`), "the payload preview")
	b.click(`tr[data-id] [data-action="details"]`)
	b.waitFor(`document.querySelector('dialog[open]')?.textContent.includes('partition_key')`, "the details with the metadata")
	b.click(`dialog[open] .modal-actions button`)
	assert.Equal(t, []string{"order-4242"}, cells("uuid"))
}

// resetPreview previews a reset of "audit" (no choice pre-filled), checks the counts per
// partition against admin and in the confirmation, and resets.
func resetPreview(t *testing.T, b *browser, e *env, url string) {
	b.open(url + "/#/topics/orders/groups/audit")
	assert.Equal(t, "", eval[string](b, `document.querySelector('input[name="offset"]').value`), "no pre-filled choice")
	assert.True(t, eval[bool](b, `document.querySelector('[data-action="reset-offset"]').disabled`), "nothing to reset to yet")
	gl, err := e.adm.GroupLag(e.ctx, "orders", "audit")
	require.NoError(t, err)
	want := "This reset skips " + thousands(gl.Lag) + " messages (never delivered)."
	b.click(`[data-preset="latest"]`)
	b.waitFor(`document.querySelector('[data-field="preview-summary"]')?.textContent === `+strconv.Quote(want), "the preview: "+want)
	perPartition := eval[[]string](b, `[...document.querySelectorAll('[data-field="reset-preview"] tr[data-partition] [data-field="skip"]')].map((td) => td.textContent)`)
	var wantParts []string
	for _, p := range gl.Partitions {
		wantParts = append(wantParts, thousands(p.Lag))
	}
	assert.Equal(t, wantParts, perPartition)

	b.fillIn(`input[name="offset"]`, "beginning")
	b.waitFor(`document.querySelector('[data-field="preview-summary"]')?.textContent === 'This reset skips and redelivers nothing.'`, "beginning: audit is there")
	b.click(`[data-preset="latest"]`)
	b.waitFor(`document.querySelector('[data-field="preview-summary"]')?.textContent === `+strconv.Quote(want), "latest again")
	b.click(`[data-action="reset-offset"]`)
	b.waitFor(`document.querySelector('dialog[open] [data-field="confirm-count"]')?.textContent === `+strconv.Quote(want), "the count in the confirmation")
	b.click(`dialog[open] [data-confirm]`)
	require.Eventually(t, func() bool {
		gl, err := e.adm.GroupLag(e.ctx, "orders", "audit")
		return err == nil && gl.Lag == 0
	}, 10*time.Second, 20*time.Millisecond, "audit's lag never dropped to 0")
}

func unique(xs []string) map[string]bool {
	out := map[string]bool{}
	for _, x := range xs {
		out[strings.TrimSpace(x)] = true
	}
	return out
}
