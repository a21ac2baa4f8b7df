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
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/dashboard"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/partition"
)

const (
	// xssPayload and xssReason would run script if the page ever parsed stored data as HTML.
	xssPayload = `<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">`
	xssReason  = `refused <b>bold</b><script>window.__xss = 3</script>`
	// markupNodes counts elements the stored data would create if it were parsed.
	markupNodes = `document.querySelectorAll('main script, main img, main b').length`
)

// TestDashboardInBrowser drives the dashboard in headless Chromium against a redis-server
// with live traffic: the topic page (partitions, lease owners, lag, live chart), reset
// offset and pause and resume from a group page, a dead letter with markup in it shown as text and replayed from
// the page onto its original partition, and a read-only dashboard that hides and refuses
// every write.
func TestDashboardInBrowser(t *testing.T) {
	b := startBrowser(t)
	e := newEnv(t)
	opts := dashboard.Options{RefreshInterval: 400 * time.Millisecond, SampleInterval: 500 * time.Millisecond}
	opts.AllowWrites = true
	rw := e.serve(opts)
	opts.AllowWrites = false
	ro := e.serve(opts)

	t.Run("topic page", func(t *testing.T) { topicPage(t, b.with(t), e.with(t), rw) })
	t.Run("reset offset", func(t *testing.T) { resetOffset(t, b.with(t), e.with(t), rw) })
	t.Run("pause and resume a group", func(t *testing.T) { pauseGroup(t, b.with(t), e.with(t), rw) })
	require.NoError(t, e.adm.CreateTopic(e.ctx, "payments", 4)) // before its first subscriber
	arrivals := e.deadLetters("payments")
	dlqID := deadLetterWithMarkup(t, e)
	t.Run("dead letter shown as text and replayed", func(t *testing.T) {
		replayFromPage(t, b.with(t), e.with(t), rw, dlqID, arrivals)
	})
	t.Run("replayed before: replay again", func(t *testing.T) {
		replayAgainFromPage(t, b.with(t), e.with(t), rw, dlqID, arrivals)
	})
	t.Run("read-only", func(t *testing.T) { readOnly(t, b.with(t), e.with(t), ro, dlqID) })
	b.requireNoProblems()
}

// topicPage runs traffic on "orders" (4 partitions) with group "billing" consuming and
// group "audit" not, checks the live chart, takes the screenshot, then stops the traffic and
// checks the partition count, lease owners and every partition's lag against admin.
func topicPage(t *testing.T, b *browser, e *env, url string) {
	require.NoError(t, e.adm.CreateTopic(e.ctx, "orders", 4))
	q, err := e.adm.QueueInfo(e.ctx, "orders")
	require.NoError(t, err)
	for _, p := range q.PerPartition {
		require.NoError(t, e.client.XGroupCreateMkStream(e.ctx, p.Stream, "audit", "0-0").Err())
	}
	e.consume("orders", "billing", func(m *message.Message) { m.Ack() })
	stop := e.traffic("orders")
	defer stop()

	b.open(url + "/#/topics/orders")
	b.waitFor(`Number(document.querySelector('[data-chart="throughput"] svg')?.dataset.points) >= 24 &&
		document.querySelectorAll('[data-chart="lag"] path.line').length === 2`, "a chart of 24 samples")
	rate := eval[string](b, `document.getElementById('stat-rate').textContent`)
	assert.NotEqual(t, "—", rate, "the publish rate is shown")
	memory := eval[string](b, `document.getElementById('stat-memory').textContent`)
	assert.Regexp(t, `^\d+\.\d (KiB|MiB|GiB) \(no maxmemory\)$|^[\d.]+/[\d.]+ (KiB|MiB|GiB) \(\d+ %\)`, memory, "the Redis memory is shown")
	if path := os.Getenv("STREAMQ_SCREENSHOT"); path != "" {
		screenshot(t, b, path)
	}

	sent := stop()
	require.Positive(t, sent)
	require.Eventually(t, func() bool {
		st, err := e.adm.GroupStats(e.ctx, "orders", "billing")
		return err == nil && st.Lag == 0 && st.Pending == 0
	}, 30*time.Second, 20*time.Millisecond, "billing never caught up")
	want := pageState{Partitions: "4", Owner: "billing-member-1", Billing: []string{}, Audit: []string{}}
	for _, lag := range e.groupLags("orders", "audit") {
		want.Audit = append(want.Audit, thousands(lag))
		want.Billing = append(want.Billing, "0")
	}
	total := int64(0)
	for _, l := range e.groupLags("orders", "audit") {
		total += l
	}
	require.Equal(t, int64(sent), total, "audit never read: its lag is everything published")
	want.TotalLag = thousands(total)
	var got pageState
	require.Eventually(t, func() bool {
		got = eval[pageState](b, pageStateJS)
		return assert.ObjectsAreEqual(want, got)
	}, 30*time.Second, 50*time.Millisecond, "the page never showed %+v; last %+v", want, &got)
	backPressure(t, b, e)
}

// backPressureMaxLen is the max length backPressure records for "orders": below what every
// partition holds once the traffic ran.
const backPressureMaxLen = 10

// backPressure records a max length of backPressureMaxLen in the metadata of "orders" (as a
// Publisher configured so would) and checks the page shows the length retention and, per
// partition, the entries over it and "audit" (which never read) as the group holding them;
// it puts the Publisher's max length back after.
func backPressure(t *testing.T, b *browser, e *env) {
	meta := keys.New("", "").Meta("orders")
	before, err := e.client.HGet(e.ctx, meta, partition.FieldMaxLen).Result()
	require.NoError(t, err)
	require.NoError(t, e.client.HSet(e.ctx, meta, partition.FieldMaxLen, backPressureMaxLen).Err())
	defer func() { require.NoError(t, e.client.HSet(e.ctx, meta, partition.FieldMaxLen, before).Err()) }()

	q, err := e.adm.QueueInfo(e.ctx, "orders")
	require.NoError(t, err)
	want := heldState{Retention: "Max length 10 per partition · approximate · acked entries only", Over: []string{}, Holders: []string{}}
	var total int64
	for _, p := range q.PerPartition {
		require.Greater(t, p.Length, int64(backPressureMaxLen), "partition %d", p.Partition)
		require.Equal(t, "audit", p.Holder, "partition %d", p.Partition)
		want.Over = append(want.Over, thousands(p.Length-backPressureMaxLen))
		want.Holders = append(want.Holders, "audit")
		total += p.Length - backPressureMaxLen
	}
	want.Total = thousands(total)
	var got heldState
	require.Eventually(t, func() bool {
		got = eval[heldState](b, heldStateJS)
		return assert.ObjectsAreEqual(want, got)
	}, 30*time.Second, 50*time.Millisecond, "the page never showed %+v; last %+v", want, &got)
}

// heldState is what the topic page shows of length retention: the retention line, the total
// over max length, and per partition the entries over it and the group holding them.
type heldState struct {
	Retention string   `json:"retention"`
	Total     string   `json:"total"`
	Over      []string `json:"over"`
	Holders   []string `json:"holders"`
}

const heldStateJS = `(() => {
	const cells = (f) => [...document.querySelectorAll('tr[data-partition] td[data-field="' + f + '"]')].map((td) => td.textContent);
	return {
		retention: document.getElementById('retention')?.textContent ?? null,
		total: document.getElementById('stat-over')?.textContent ?? null,
		over: cells('over'), holders: cells('holder'),
	};
})()`

// pageState is what the topic page shows: the partition count, the total lag, the lag of
// each group per partition, and who holds billing's lease on partition 0.
type pageState struct {
	Partitions string   `json:"partitions"`
	TotalLag   string   `json:"totalLag"`
	Owner      string   `json:"owner"`
	Billing    []string `json:"billing"`
	Audit      []string `json:"audit"`
}

const pageStateJS = `(() => {
	const text = (sel) => document.querySelector(sel)?.textContent ?? null;
	const lags = (g) => [...document.querySelectorAll('tr[data-partition] td[data-group="' + g + '"][data-field="lag"]')].map((td) => td.textContent);
	return {
		partitions: text('#stat-partitions'), totalLag: text('#stat-lag'),
		owner: text('tr[data-partition="0"] td[data-group="billing"][data-field="owner"]'),
		billing: lags('billing'), audit: lags('audit'),
	};
})()`

// resetOffset moves group "audit" to latest from its page, through the confirmation.
func resetOffset(t *testing.T, b *browser, e *env, url string) {
	b.open(url + "/#/topics/orders/groups/audit")
	b.click(`[data-preset="latest"]`)
	b.waitFor(`document.querySelector('[data-field="preview-summary"]')?.textContent.startsWith('This reset skips')`, "the preview")
	b.click(`[data-action="reset-offset"]`)
	b.waitFor(`document.querySelector('dialog[open]')?.textContent.includes('will continue from latest')`, "the confirmation")
	b.click(`dialog[open] [data-confirm]`)
	require.Eventually(t, func() bool {
		for _, l := range e.groupLags("orders", "audit") {
			if l != 0 {
				return false
			}
		}
		return true
	}, 10*time.Second, 20*time.Millisecond, "audit's lag never dropped to 0")
	b.waitFor(`document.getElementById('stat-lag').textContent === '0'`, "the page to show lag 0")
}

// pauseGroup pauses group "audit" from its page through the confirmation, checks the pause
// in Redis and on the page, then resumes it the same way.
func pauseGroup(t *testing.T, b *browser, e *env, url string) {
	b.open(url + "/#/topics/orders/groups/audit")
	b.waitFor(`document.getElementById('stat-delivery')?.textContent === 'running'`, "the group shown running")
	paused := func() bool {
		p, err := e.adm.GroupPause(e.ctx, "orders", "audit")
		require.NoError(t, err)
		return p.Paused
	}
	b.click(`[data-action="pause-group"]`)
	b.waitFor(`document.querySelector('dialog[open]')?.textContent.includes('stops reading and delivering')`, "the pause confirmation")
	b.click(`dialog[open] [data-confirm]`)
	require.Eventually(t, paused, 10*time.Second, 20*time.Millisecond, "the group was not paused")
	b.waitFor(`document.getElementById('stat-delivery').textContent === 'paused'`, "the page to show the pause")
	b.waitFor(`document.querySelector('[data-field="pause-state"]').textContent.includes('Paused by an operator since')`, "since when")
	b.waitFor(`document.getElementById('group-health').textContent.includes('paused by an operator')`, "the health naming the pause")
	assert.Contains(t, eval[string](b, `document.getElementById('group-health').textContent`), "streamq resume orders audit")

	b.click(`[data-action="resume-group"]`)
	b.waitFor(`document.querySelector('dialog[open]')?.textContent.includes('goes on where it stopped')`, "the resume confirmation")
	b.click(`dialog[open] [data-confirm]`)
	require.Eventually(t, func() bool { return !paused() }, 10*time.Second, 20*time.Millisecond, "the group was not resumed")
	b.waitFor(`document.getElementById('stat-delivery').textContent === 'running'`, "the page to show it running")
}

// deadLetterWithMarkup dead-letters one message forced to partition 2 of "payments" whose
// payload and reason hold markup, and returns its DLQ id.
func deadLetterWithMarkup(t *testing.T, e *env) string {
	m := message.NewMessage(watermill.NewUUID(), []byte(xssPayload))
	m.Metadata.Set(streamq.ForcePartitionMetadata, "2")
	m.Metadata.Set(deadKey, xssReason)
	require.NoError(t, e.pub.Publish("payments", m))
	require.Eventually(t, func() bool {
		n, err := e.adm.DLQSize(e.ctx, "payments")
		return err == nil && n == 1
	}, 30*time.Second, 20*time.Millisecond, "the message was never dead-lettered")
	dead, err := e.adm.DLQEntries(e.ctx, "payments", 1)
	require.NoError(t, err)
	require.Equal(t, 2, dead[0].Partition)
	return dead[0].ID
}

// replayFromPage opens the DLQ page, checks the markup is shown as text, clicks Replay,
// confirms, and waits for the message to arrive on partition 2.
func replayFromPage(t *testing.T, b *browser, e *env, url, dlqID string, arrivals <-chan arrival) {
	b.open(url + "/#/topics/payments/dlq")
	row := `tr[data-partition="2"][data-id="` + dlqID + `"]`
	b.waitFor(`document.querySelector('`+row+`') !== null`, "the dead letter's row")
	assert.Equal(t, xssPayload, eval[string](b, `document.querySelector('`+row+` [data-field="payload"] .payload-text').textContent`))
	assert.Equal(t, xssReason, eval[string](b, `document.querySelector('`+row+` [data-field="reason"]').textContent`))
	assert.Equal(t, 0, eval[int](b, markupNodes), "stored markup created elements")
	assert.Equal(t, "undefined", eval[string](b, `typeof window.__xss`), "stored script ran")

	b.click(row + ` [data-action="replay"]`)
	b.waitFor(`document.querySelector('dialog[open]')?.textContent.includes('original partition')`, "the confirmation")
	b.click(`dialog[open] [data-confirm]`)
	select {
	case a := <-arrivals:
		assert.Equal(t, 2, a.partition, "replayed onto its original partition")
		assert.Equal(t, dlqID, a.replayedFrom)
	case <-time.After(30 * time.Second):
		t.Fatal("the replayed message never arrived")
	}
	b.waitFor(`[...document.querySelectorAll('.toast')].some((el) => el.textContent === 'Replayed 1 dead letter to partition 2')`, "the notice")
	assert.Len(t, e.ids("payments", 2), 2, "the original and the replay")
	b.waitFor(`document.querySelector('`+row+` [data-field="replayed"]') !== null`, "the letter shown as replayed")
}

// replayAgainFromPage clicks Replay on the dead letter replayed before: nothing is replayed,
// a dialog says when and as which entry it was, and its Replay again replays it.
func replayAgainFromPage(t *testing.T, b *browser, e *env, url, dlqID string, arrivals <-chan arrival) {
	b.open(url + "/#/topics/payments/dlq")
	row := `tr[data-partition="2"][data-id="` + dlqID + `"]`
	b.waitFor(`document.querySelector('`+row+` [data-field="replayed"]') !== null`, "the letter shown as replayed")
	first := e.ids("payments", 2)[1]
	b.click(row + ` [data-action="replay"]`)
	b.waitFor(`document.querySelector('dialog[open]')?.textContent.includes('original partition')`, "the confirmation")
	b.click(`dialog[open] [data-confirm]`)
	b.waitFor(`document.querySelector('dialog[open] [data-field="already-replayed"]')?.textContent.includes('already replayed at ')`, "the notice")
	assert.Contains(t, eval[string](b, `document.querySelector('dialog[open] [data-field="already-replayed"]').textContent`), " as "+first)
	assert.Equal(t, "Replay again", eval[string](b, `document.querySelector('dialog[open] [data-confirm]').textContent`))
	assert.Len(t, e.ids("payments", 2), 2, "nothing replayed before asked again")
	b.click(`dialog[open] [data-confirm]`)
	select {
	case a := <-arrivals:
		assert.Equal(t, dlqID, a.replayedFrom)
	case <-time.After(30 * time.Second):
		t.Fatal("the replayed-again message never arrived")
	}
	b.waitFor(`[...document.querySelectorAll('.toast')].some((el) => el.textContent === 'Replayed 1 dead letter to partition 2')`, "the notice")
	assert.Len(t, e.ids("payments", 2), 3, "the original and two replays")
}

// readOnly opens the read-only dashboard: no write control anywhere, and a write sent from
// the page with its session's CSRF token is refused.
func readOnly(t *testing.T, b *browser, e *env, url, dlqID string) {
	b.open(url + "/#/topics/payments/dlq")
	row := `tr[data-partition="2"][data-id="` + dlqID + `"]`
	b.waitFor(`document.querySelector('`+row+`') !== null`, "the dead letter's row")
	assert.Equal(t, "read-only", eval[string](b, `document.getElementById('mode').textContent`))
	assert.Equal(t, 0, eval[int](b, `document.querySelectorAll('[data-action="replay"], [data-action="delete"], `+
		`[data-action="replay-selected"], [data-action="delete-selected"], [data-action="replay-all"], [data-action="clear"], main input[type=checkbox]').length`))
	assert.Equal(t, 1, eval[int](b, `document.querySelectorAll('`+row+` [data-action="details"]').length`), "reading stays possible")
	assert.Equal(t, xssPayload, eval[string](b, `document.querySelector('`+row+` [data-field="payload"] .payload-text').textContent`))
	assert.Equal(t, 0, eval[int](b, markupNodes))

	status := eval[int](b, `(async () => {
		const s = await (await fetch('api/session')).json();
		const r = await fetch('api/topics/payments/dlq/replay', {method: 'POST',
			headers: {'Content-Type': 'application/json', 'X-CSRF-Token': s.csrfToken},
			body: JSON.stringify({entries: [{partition: 2, id: '`+dlqID+`'}]})});
		return r.status;
	})()`)
	assert.Equal(t, 403, status)
	assert.Len(t, e.ids("payments", 2), 3, "nothing was replayed")

	b.open(url + "/#/topics/orders/groups/audit")
	assert.Equal(t, 0, eval[int](b, `document.querySelectorAll('[data-action="reset-offset"], main input').length`))
	assert.Contains(t, eval[string](b, `document.querySelector('.readonly-note').textContent`), "Read-only")
}

// screenshot writes a PNG of the viewport to path; a relative path is taken from the
// repository root (STREAMQ_SCREENSHOT=docs/dashboard.png), not from e2e/ where the test runs.
func screenshot(t *testing.T, b *browser, path string) {
	t.Helper()
	writeScreenshot(t, path, run(b, chromedp.CaptureScreenshot()))
}

// fullScreenshot writes a PNG of the whole page, the window's width, to path (as screenshot).
func fullScreenshot(t *testing.T, b *browser, path string) {
	t.Helper()
	writeScreenshot(t, path, run(b, chromedp.FullScreenshot(100)))
}

func writeScreenshot(t *testing.T, path string, img []byte) {
	t.Helper()
	if !filepath.IsAbs(path) {
		path = filepath.Join("..", path)
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, img, 0o644))
	t.Logf("screenshot written to %s", path)
}

// thousands formats n as the page does (en-US grouping).
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
