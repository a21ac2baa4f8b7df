package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/dashboard"
)

// TestDashboardShowsAnOutage: a group whose handler marks every failure with streamq.Outage
// (its downstream is down) shows on its page, for each partition, "paused: downstream failing
// since …, next probe in …", and leads with the downstream-outage warning and its next step.
func TestDashboardShowsAnOutage(t *testing.T) {
	b := startBrowser(t)
	e := newEnv(t)
	require.NoError(t, e.adm.CreateTopic(e.ctx, "invoices", 2))
	for i := range 6 { // three on each partition (a message without a key goes to a random one)
		m := message.NewMessage(watermill.NewUUID(), []byte("invoice"))
		m.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(i%2))
		require.NoError(t, e.pub.Publish("invoices", m))
	}
	e.consume("invoices", "ledger", func(m *message.Message) {
		_ = streamq.Outage(m, errors.New("ledger: 503 Service Unavailable"))
		m.Nack()
	})
	require.Eventually(t, func() bool {
		s, err := e.adm.GroupStats(e.ctx, "invoices", "ledger")
		return err == nil && s.Outages == 2
	}, 20*time.Second, 50*time.Millisecond)
	url := e.serve(dashboard.Options{RefreshInterval: 400 * time.Millisecond})

	b.open(url + "/#/topics/invoices/groups/ledger")
	b.waitFor(`document.querySelectorAll('[data-field="partition-delivery"] .warn').length === 2`, "both partitions paused")
	cells := eval[[]string](b, `[...document.querySelectorAll('[data-field="partition-delivery"]')].map((c) => c.textContent)`)
	for _, c := range cells {
		assert.Regexp(t, `^paused: downstream failing since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \([^)]+ ago\), (next probe in \d|probing now)`, c)
	}
	assert.Equal(t, "ledger: 503 Service Unavailable (", eval[string](b,
		`document.querySelector('[data-field="partition-delivery"] .warn').title`)[:len("ledger: 503 Service Unavailable (")])
	assert.Equal(t, "2 paused", eval[string](b, `document.getElementById('stat-delivery').textContent`))
	assert.Contains(t, eval[string](b, `document.querySelector('[data-field="pause-state"]').textContent`),
		"Waiting out a downstream outage on partitions 0, 1")
	block := `#group-health [data-field="health"]`
	assert.Equal(t, "warning", eval[string](b, `document.querySelector('`+block+`').dataset.state`))
	p := readProblems(b, block)
	require.Len(t, p.Lines, 1)
	p.check(t, "the group page")
	assert.Contains(t, p.Lines[0].Text, "paused: downstream failing on partitions 0, 1")
	assert.Contains(t, p.Lines[0].Next, "resumes by itself")
	assert.Equal(t, "$ streamq stats invoices ledger", p.Lines[0].Command)
	if dir := os.Getenv("STREAMQ_SCREENSHOTS"); dir != "" {
		fullScreenshot(t, b, filepath.Join(dir, "dashboard-outage.png"))
	}
	b.requireNoProblems()
}
