package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/dashboard"
)

// The screen the DLQ page is checked at: the night shift's laptop.
const (
	dlqWidth  = 1366
	dlqHeight = 900
)

// nightReasons are the night shift's 882 dead letters: five reasons, with how many each.
var nightReasons = []struct {
	reason string
	n      int
}{
	{"retries exhausted (3): payments: 503 Service Unavailable from https://payments.internal/v2/charges (upstream connect error or disconnect/reset before headers)", 500},
	{"retries exhausted (3): card declined: insufficient funds (issuer 05)", 250},
	{"malformed entry: missing payload", 100},
	{"retries exhausted (3): ledger: context deadline exceeded", 30},
	{"dead-lettered: customer unknown", 2},
}

// orderPayload is an order as a service writes it: pretty-printed JSON of about 600 bytes.
func orderPayload(i int) []byte {
	return fmt.Appendf(nil, `{
  "order": %d,
  "customer": "customer-%d",
  "currency": "EUR",
  "amount": %d.%02d,
  "items": [
    {"sku": "SKU-%05d", "name": "Stainless steel water bottle, 750 ml", "qty": 2, "price": 18.90},
    {"sku": "SKU-%05d", "name": "Replacement lid with carry loop", "qty": 1, "price": 6.50}
  ],
  "shipping": {"method": "express", "address": {"street": "%d Harbour Road", "city": "Rotterdam", "zip": "3011 AA", "country": "NL"}},
  "placedAt": "2026-12-03T02:%02d:%02dZ"
}`, i, i%40, 20+i%300, i%100, i%97, i%89, 10+i%90, i%60, i%60)
}

// TestDashboardDLQAtScale: the DLQ page of 882 dead letters of 5 reasons at 1366x900: the top
// reasons block counts them by reason, largest first, and a reason picked there filters the
// list; the letters' rows are compact enough that ten fit one screen, their reason and
// payload cut to two lines, the whole in Details.
func TestDashboardDLQAtScale(t *testing.T) {
	b := startBrowser(t)
	b.do(chromedp.EmulateViewport(dlqWidth, dlqHeight))
	e := newEnv(t)
	require.NoError(t, e.adm.CreateTopic(e.ctx, "payments", 4))
	i := 0
	base := time.Now().Add(-2 * time.Hour)
	for _, r := range nightReasons {
		for range r.n {
			group := "payments"
			if strings.HasPrefix(r.reason, "malformed") {
				group = ""
			}
			_, err := e.adm.AddDeadLetter(e.ctx, admin.NewDeadLetter{Topic: "payments", Partition: i % 4, Group: group, Reason: r.reason,
				RetryCount: 3, MaxRetries: 3, Payload: orderPayload(i), Metadata: map[string]string{"partition_key": fmt.Sprintf("customer-%d", i%40)},
				FailedAt: base.Add(time.Duration(i) * 8 * time.Second)})
			require.NoError(t, err)
			i++
			time.Sleep(time.Millisecond) // a DLQ id a millisecond: the list's order is the failures' order
		}
	}
	url := e.serve(dashboard.Options{AllowWrites: true, RefreshInterval: time.Second})

	b.open(url + "/#/topics/payments/dlq")
	b.waitFor(`document.querySelectorAll('tr[data-id]').length === 50 && document.querySelectorAll('[data-field="top-reasons"] [data-field="count"]').length === 5`,
		"the first page and the top reasons")
	counts := eval[[]string](b, `[...document.querySelectorAll('[data-field="top-reasons"] [data-field="count"]')].map((el) => el.textContent)`)
	assert.Equal(t, []string{"500", "250", "100", "30", "2"}, counts, "largest first")
	picks := eval[[]string](b, `[...document.querySelectorAll('[data-field="top-reasons"] [data-action="filter-reason"]')].map((el) => el.textContent)`)
	for j, r := range nightReasons {
		assert.Equal(t, r.reason, picks[j])
	}
	assert.Equal(t, "882 dead letters, 5 reasons", eval[string](b, `document.querySelector('[data-field="reasons-total"]').textContent`))
	if dir := os.Getenv("STREAMQ_SCREENSHOTS"); dir != "" {
		screenshot(t, b, filepath.Join(dir, "dashboard-dlq.png"))
	}

	// Ten letters a screen: scroll the list's first row under the top bar; the tenth ends
	// within the window.
	eval[bool](b, `(() => { const top = document.querySelector('.topbar, header')?.getBoundingClientRect().height || 0;
		const head = document.querySelector('.dlq-table thead').getBoundingClientRect();
		window.scrollBy(0, head.top - top); return true; })()`)
	heights := eval[[]float64](b, `[...document.querySelectorAll('tr[data-id]')].slice(0, 10).map((r) => r.getBoundingClientRect().height)`)
	for j, hgt := range heights {
		assert.LessOrEqual(t, hgt, 75.0, "row %d is %.0f px high", j, hgt)
	}
	tenth := eval[float64](b, `document.querySelectorAll('tr[data-id]')[9].getBoundingClientRect().bottom`)
	assert.LessOrEqual(t, tenth, float64(dlqHeight), "the tenth letter ends at %.0f px: ten letters a screen", tenth)
	assert.Equal(t, 2, eval[int](b, `getComputedStyle(document.querySelector('tr[data-id] .payload-text')).webkitLineClamp|0`), "payload cut to two lines")
	if dir := os.Getenv("STREAMQ_SCREENSHOTS"); dir != "" {
		screenshot(t, b, filepath.Join(dir, "dashboard-dlq-rows.png"))
	}

	b.click(`tr[data-id] [data-action="details"]`)
	b.waitFor(`document.querySelector('dialog[open] pre.payload-body.full')?.textContent.includes('"shipping"')`, "the whole payload in Details")
	b.click(`dialog[open] .modal-actions .btn`)

	b.do(chromedp.ScrollIntoView(`[data-field="top-reasons"]`))
	b.click(`[data-field="top-reasons"] [data-action="filter-reason"]:nth-of-type(1)`)
	rows := `[...document.querySelectorAll('tr[data-id] [data-field="reason"]')]`
	b.waitFor(`document.querySelector('input[name="reason"]').value === '`+nightReasons[0].reason+`' && `+rows+`.length === 50 && `+
		rows+`.every((el) => el.textContent === '`+nightReasons[0].reason+`') && document.querySelectorAll('[data-field="top-reasons"] [data-field="count"]').length === 1`,
		"the list filtered by the picked reason")
	b.requireNoProblems()
}
