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
// 6,000 and group "audit" with no live member (its member crashed 12 minutes ago), group
// "billing" consuming; "ledger" with six groups whose members crashed, each with a backlog
// and dead letters arriving (a dozen problems); "payments" with 60 dead letters arriving (3
// of them replayed); "quiet" healthy. A first dashboard records history and is closed before
// a second one serves the pages, so the charts show what happened before anybody looked.
func TestDashboardIncident(t *testing.T) {
	b := startBrowser(t)
	e := newEnv(t)
	incident(t, e)
	recordHistoryBefore(t, e)
	opts := dashboard.Options{RefreshInterval: 400 * time.Millisecond, SampleInterval: 500 * time.Millisecond,
		HistoryInterval: -1, AllowWrites: true}
	url := e.serve(opts)

	t.Run("topics page worst first", func(t *testing.T) { topicsInIncident(t, b.with(t), e.with(t), url) })
	t.Run("group page leads with its health", func(t *testing.T) { groupPageInIncident(t, b.with(t), url) })
	t.Run("history there on open, one colour per group", func(t *testing.T) { chartsOnOpen(t, b.with(t), url) })
	t.Run("dead letters paged, filtered, searched", func(t *testing.T) { deadLetterBrowser(t, b.with(t), url) })
	t.Run("message browser", func(t *testing.T) { messageBrowser(t, b.with(t), e.with(t), url) })
	t.Run("reset offset preview", func(t *testing.T) { resetPreview(t, b.with(t), e.with(t), url) })
	b.requireNoProblems()
}

// incident sets up the four topics.
func incident(t *testing.T, e *env) {
	ledger(t, e) // first: billing's consumption of orders is in the history recorded after
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
	e.crashed("orders", "audit", "audit-worker-3", auditGone)

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

// auditGone is how long before the test the member of "audit" crashed.
const auditGone = 12 * time.Minute

// ledgerGroups are the groups of "ledger": each has lost its member (one crashed a minute
// before the next) and dead-letters 2 messages, two problems each.
var ledgerGroups = []string{"posting", "reconcile", "export", "statements", "fx-rates", "archive"}

// ledger sets up topic "ledger" (2 partitions, 200 messages) with ledgerGroups.
func ledger(t *testing.T, e *env) {
	require.NoError(t, e.adm.CreateTopic(e.ctx, "ledger", 2))
	q, err := e.adm.QueueInfo(e.ctx, "ledger")
	require.NoError(t, err)
	for _, g := range ledgerGroups {
		for _, p := range q.PerPartition {
			require.NoError(t, e.client.XGroupCreateMkStream(e.ctx, p.Stream, g, "0-0").Err())
		}
	}
	msgs := make([]*message.Message, 200)
	for i := range msgs {
		msgs[i] = message.NewMessage(watermill.NewUUID(), []byte(`{"entry":`+strconv.Itoa(i)+`}`))
	}
	require.NoError(t, e.pub.Publish("ledger", msgs...))
	for i, g := range ledgerGroups {
		e.crashed("ledger", g, g+"-worker-1", time.Duration(20+i)*time.Minute)
		for j := range 2 {
			_, err := e.adm.AddDeadLetter(e.ctx, admin.NewDeadLetter{Topic: "ledger", Partition: j, Group: g, Reason: "schema mismatch",
				Payload: []byte(`{"entry":-1}`)})
			require.NoError(t, err)
		}
	}
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
	b.waitFor(`document.querySelectorAll('tr[data-topic]').length === 4`, "four topics")
	gl, err := e.adm.GroupLag(e.ctx, "orders", "audit")
	require.NoError(t, err)
	require.Equal(t, int64(backlog), gl.Lag)
	b.waitFor(`document.querySelector('tr[data-problems-of="payments"] [data-code="dead-letters-arriving"]') !== null`, "dead letters arriving")
	order := eval[[]string](b, `[...document.querySelectorAll('tr[data-topic]')].map((tr) => tr.dataset.topic + ':' + tr.dataset.health)`)
	assert.Equal(t, []string{"ledger:critical", "orders:critical", "payments:warning", "quiet:ok"}, order, "worst first: ledger's oldest waiting message is older")
	row := `tr[data-topic="orders"]`
	assert.Equal(t, thousands(backlog)+"audit", eval[string](b, `document.querySelector('`+row+` [data-field="worst-lag"]').textContent`))
	assert.NotEqual(t, "—", eval[string](b, `document.querySelector('`+row+` [data-field="lag-age"]').textContent`), "the age of the oldest waiting message")
	assert.Equal(t, "0 live members", eval[string](b, `document.querySelector('`+row+` [data-group="audit"] [data-field="members"]').textContent`))
	assert.Equal(t, "1 live member", eval[string](b, `document.querySelector('`+row+` [data-group="billing"] [data-field="members"]').textContent`))
	assert.Contains(t, eval[string](b, `document.querySelector('tr[data-problems-of="orders"] [data-code="no-live-member"] [data-field="problem"]').textContent`),
		"group audit: no live member: "+strconv.Itoa(backlog)+" messages waiting and nobody consumes them; no member seen since ")
	dozen := readProblems(b, `tr[data-problems-of="ledger"]`)
	assert.Len(t, dozen.Lines, 2*len(ledgerGroups), "a dozen problems")
	dozen.check(t, "the Topics page")
	dlq := eval[string](b, `document.querySelector('tr[data-topic="payments"] [data-field="dlq"]').textContent`)
	assert.Equal(t, strconv.Itoa(deadCount)+"+"+strconv.Itoa(deadCount)+" in 5 min", dlq)
	if dir := os.Getenv("STREAMQ_SCREENSHOTS"); dir != "" {
		fullScreenshot(t, b, filepath.Join(dir, "dashboard-incident.png"))
		b.open(url + "/#/topics/orders")
		b.waitFor(`Number(document.querySelector('[data-chart="lag"] svg')?.dataset.points) >= 6`, "the chart")
		screenshot(t, b, filepath.Join(dir, "dashboard-incident-topic.png"))
	}
}

// groupPageInIncident opens the group page of "audit" (no live member, a backlog of
// 6,000: critical): it leads with that health, not with "running"; every problem says since
// when and its next step, in a block wider than 600 px at a 1366 px window; the crashed
// member is listed with its expired heartbeat.
func groupPageInIncident(t *testing.T, b *browser, url string) {
	b.open(url + "/#/topics/orders/groups/audit")
	b.waitFor(`document.querySelector('#group-health [data-field="health"]') !== null`, "the health block")
	block := `#group-health [data-field="health"]`
	assert.Equal(t, "critical", eval[string](b, `document.querySelector('`+block+`').dataset.state`))
	headline := eval[string](b, `document.querySelector('`+block+` [data-field="headline"]').textContent`)
	assert.Equal(t, "audit needs attention: 1 problem", headline)
	assert.NotContains(t, strings.ToLower(headline), "running")
	assert.True(t, eval[bool](b, `document.querySelector('`+block+`').getBoundingClientRect().bottom <= document.querySelector('.stats').getBoundingClientRect().top`),
		"the health comes before the figures")
	assert.Equal(t, "rgb(254, 242, 242)", eval[string](b, `getComputedStyle(document.querySelector('`+block+`')).backgroundColor`), "the block is red")
	assert.Equal(t, "running", eval[string](b, `document.getElementById('stat-delivery').textContent`))
	delivery := eval[string](b, `getComputedStyle(document.querySelector('[data-field="delivery"]')).backgroundColor`)
	assert.NotEqual(t, "rgb(220, 252, 231)", delivery, "running is not green while the group is critical")
	assert.Contains(t, eval[string](b, `document.querySelector('[data-field="pause-state"]').textContent`), "no member is live")

	p := readProblems(b, block)
	require.Len(t, p.Lines, 1)
	p.check(t, "the group page")
	assert.Regexp(t, `no member seen since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(1[23]m`, p.Lines[0].Text,
		"a member was last seen when it crashed, in UTC as every time on the pages")
	assert.Equal(t, "last member: audit-worker-3 ("+crashedHost+" pid "+strconv.Itoa(crashedPID)+"), its heartbeats stopped",
		eval[string](b, `document.querySelector('`+block+` [data-field="detail"]').textContent`), "the member seen last, its host and PID")
	assert.Equal(t, "$ streamq groups orders", p.Lines[0].Command)

	member := `tr[data-member="audit-worker-3"]`
	assert.Equal(t, "heartbeat expired", eval[string](b, `document.querySelector('`+member+` .pill').textContent`))
	assert.Regexp(t, `^expired 1[23]m \d+s ago · \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$`, eval[string](b, `document.querySelector('`+member+` [data-field="heartbeat"]').textContent`))
	assert.Contains(t, eval[string](b, `document.querySelector('[data-field="last-seen"]').textContent`), "m ")
	if dir := os.Getenv("STREAMQ_SCREENSHOTS"); dir != "" {
		screenshot(t, b, filepath.Join(dir, "dashboard-incident-group.png"))
	}
}

// problemLines is what a list of problems shows: each line's text, command and height, the
// line height, the list's width.
type problemLines struct {
	Width      float64 `json:"width"`
	LineHeight float64 `json:"lineHeight"`
	Lines      []struct {
		Text    string  `json:"text"`
		Height  float64 `json:"height"`
		Next    string  `json:"next"`
		Command string  `json:"command"`
	} `json:"lines"`
}

func readProblems(b *browser, within string) problemLines {
	return eval[problemLines](b, `(() => {
		const list = document.querySelector('`+within+` [data-field="problems"]');
		const text = (el, css) => el.querySelector(css)?.textContent ?? '';
		return {width: list.getBoundingClientRect().width,
			lineHeight: parseFloat(getComputedStyle(list.querySelector('[data-field="problem"]')).lineHeight),
			lines: [...list.querySelectorAll('li')].map((li) => ({text: text(li, '[data-field="problem"]'),
				height: li.querySelector('[data-field="problem"]').getBoundingClientRect().height,
				next: text(li, '[data-field="next"]'), command: text(li, '.cmd')}))};
	})()`)
}

// check: the list is at least 600 px wide, and each problem is one line that says since
// when, with a next step and its command.
func (p problemLines) check(t *testing.T, where string) {
	t.Helper()
	assert.GreaterOrEqual(t, p.Width, 600.0, "%s: the problems' width", where)
	for _, l := range p.Lines {
		assert.Contains(t, l.Text, " since ", "%s: since when", where)
		assert.Less(t, l.Height, 1.5*p.LineHeight, "%s: one line, not wrapped: %q", where, l.Text)
		assert.True(t, strings.HasPrefix(l.Next, "Next"), "%s: a next step: %q", where, l.Next)
		assert.True(t, strings.HasPrefix(l.Command, "$ streamq "), "%s: a command: %q", where, l.Command)
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
	assert.Equal(t, `{"payment":42}`, eval[string](b, `document.querySelector('tr[data-id] [data-field="payload"] .payload-text').textContent`))
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
