package dashboard_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/streamq-dev/streamq/dashboard"
)

type ratesJSON struct {
	Topic      string   `json:"topic"`
	IntervalMs int64    `json:"intervalMs"`
	WindowMs   int64    `json:"windowMs"`
	Groups     []string `json:"groups"`
	Points     []struct {
		T           int64   `json:"t"`
		PublishRate float64 `json:"publishRate"`
		Length      int64   `json:"length"`
		Groups      map[string]struct {
			ConsumeRate *float64 `json:"consumeRate"`
			Lag         int64    `json:"lag"`
			Pending     int64    `json:"pending"`
		} `json:"groups"`
	} `json:"points"`
}

// TestRates views a topic, publishes, and waits for the sampler to chart it: a publish rate
// above zero, the group's lag, and a rate on the topics list.
func TestRates(t *testing.T) {
	e, _ := topicFixture(t)
	s := e.serve(dashboard.Options{SampleInterval: 50 * time.Millisecond, SampleWindow: time.Second})
	var rates ratesJSON
	s.getJSON("/api/topics/orders/rates", &rates)
	assert.Equal(t, "orders", rates.Topic)
	assert.Equal(t, int64(50), rates.IntervalMs)
	assert.Equal(t, int64(1000), rates.WindowMs)
	for _, p := range rates.Points { // a loaded machine may have sampled more than once by now
		assert.Zero(t, p.PublishRate, "nothing published since the sampler started")
	}

	e.publishRoundRobin("orders", 20, 4)
	require.Eventually(t, func() bool {
		s.getJSON("/api/topics/orders/rates", &rates)
		for _, p := range rates.Points {
			if p.PublishRate > 0 && p.Length == 50 {
				return true
			}
		}
		return false
	}, 10*time.Second, 20*time.Millisecond, "no point with the published entries")
	assert.Equal(t, []string{"g", "idle"}, rates.Groups)
	last := rates.Points[len(rates.Points)-1]
	assert.Equal(t, int64(50), last.Groups["idle"].Lag)
	assert.Equal(t, int64(8), last.Groups["g"].Pending)
	require.NotNil(t, last.Groups["g"].ConsumeRate)
	assert.Zero(t, *last.Groups["g"].ConsumeRate)
	assert.LessOrEqual(t, len(rates.Points), 20, "the window keeps 1s / 50ms samples")

	require.Eventually(t, func() bool {
		var list topicsJSON
		s.getJSON("/api/topics", &list)
		return len(list.Topics) == 1 && list.Topics[0].PublishRate != nil
	}, 10*time.Second, 20*time.Millisecond, "the topics list never showed a rate")
}

// TestCloseStopsTheSamplerLeakFree starts the sampler through the API, closes the handler
// and checks that no goroutine is left.
func TestCloseStopsTheSamplerLeakFree(t *testing.T) {
	e, _ := topicFixture(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	h, err := dashboard.New(e.client, dashboard.Options{SampleInterval: 10 * time.Millisecond, SampleWindow: time.Second})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var rates ratesJSON
	require.Eventually(t, func() bool {
		res, err := client.Get(srv.URL + "/api/topics/orders/rates")
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.NoError(t, decodeJSON(res.Body, &rates))
		return len(rates.Points) >= 2
	}, 10*time.Second, 10*time.Millisecond, "the sampler never ran")
	srv.Close()
	require.NoError(t, h.Close())
	require.NoError(t, h.Close())
}
