package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/dashboard"
)

// TestDashboardCutsLongNames: a topic and a group with names of the longest length streamq
// takes (249 bytes) are shown cut with an ellipsis, the whole name in the title, and the
// Topics table stays inside the window.
func TestDashboardCutsLongNames(t *testing.T) {
	b := startBrowser(t)
	e := newEnv(t)
	topic := "orders-" + strings.Repeat("x", 242)
	group := "billing-" + strings.Repeat("y", 200) // the fixture names its member after the group
	require.NoError(t, e.adm.CreateTopic(e.ctx, topic, 2))
	require.NoError(t, e.pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("x"))))
	e.consume(topic, group, func(m *message.Message) { m.Ack() })
	url := e.serve(dashboard.Options{RefreshInterval: 400 * time.Millisecond})

	b.open(url + "/#/")
	b.waitFor(`document.querySelectorAll('.table a.name').length >= 2`, "the topic and its group listed")
	names := eval[[]map[string]any](b, `[...document.querySelectorAll('.table a.name')].map((a) => ({
		title: a.title, cut: a.scrollWidth > a.clientWidth, width: a.getBoundingClientRect().width}))`)
	require.Len(t, names, 2)
	assert.Equal(t, topic, names[0]["title"], "the whole topic name in the title")
	assert.Equal(t, group, names[1]["title"], "the whole group name in the title")
	for _, n := range names {
		assert.Equal(t, true, n["cut"], "a long name is cut with an ellipsis")
		assert.Less(t, n["width"], 400.0)
	}
	assert.LessOrEqual(t, eval[float64](b, `document.querySelector('.table').getBoundingClientRect().right`),
		eval[float64](b, `window.innerWidth`), "the table stays inside the window")
	b.requireNoProblems()
}
