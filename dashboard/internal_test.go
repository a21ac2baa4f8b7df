package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/streamq-dev/streamq/admin"
)

// fakeStore counts samples per topic; unknown topics are admin.ErrTopicNotFound.
type fakeStore struct {
	mu       sync.Mutex
	known    map[string]bool
	recorded map[string]int
	failOn   string
	refuse   bool // RecordHistory answers admin.ErrWritesRefused
	taken    int  // samples taken: the n-th is at second n
	all      int
}

func newFakeStore(topics ...string) *fakeStore {
	f := &fakeStore{known: map[string]bool{}, recorded: map[string]int{}}
	for _, t := range topics {
		f.known[t] = true
	}
	return f
}

func (f *fakeStore) ListTopics(context.Context) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for t := range f.known {
		out = append(out, t)
	}
	return out, nil
}

func (f *fakeStore) TakeSample(_ context.Context, topic string) (admin.HistorySample, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.all++
	if !f.known[topic] {
		return admin.HistorySample{}, fmt.Errorf("%w: %q", admin.ErrTopicNotFound, topic)
	}
	if topic == f.failOn {
		return admin.HistorySample{}, errors.New("boom")
	}
	f.taken++
	return admin.HistorySample{Topic: topic, Time: time.Unix(int64(f.taken), 0), Published: int64(10 * f.taken)}, nil
}

func (f *fakeStore) RecordHistory(_ context.Context, s admin.HistorySample, _ admin.HistoryOptions) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refuse {
		return false, fmt.Errorf("%w: OOM command not allowed", admin.ErrWritesRefused)
	}
	f.recorded[s.Topic]++
	return true, nil
}

func (f *fakeStore) count(topic string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.recorded[topic]
}

// calls counts every sample taken, failed or not.
func (f *fakeStore) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.all
}

func (f *fakeStore) set(change func(*fakeStore)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
}

// countingLogger counts error lines.
type countingLogger struct {
	watermill.NopLogger
	mu sync.Mutex
	n  int
}

func (l *countingLogger) Error(string, error, watermill.LogFields) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
}

func (l *countingLogger) errors() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// clock is a settable time.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (s *sampler) watched() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.topics)
}

func samplerOptions(interval, every time.Duration, log watermill.LoggerAdapter) Options {
	return Options{SampleInterval: interval, HistoryInterval: every, HistoryRetention: time.Hour, Logger: log}
}

// TestSamplerRecordsEveryTopic: with the history on, every registered topic is recorded
// every HistoryInterval, viewed or not, from New on; a viewed topic is recorded at once and
// then every SampleInterval; a topic not viewed for watchIdle or deleted is dropped from the
// viewed ones; close stops the loop with no goroutine left.
func TestSamplerRecordsEveryTopic(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newFakeStore("a", "b")
	clk := &clock{now: time.Unix(1000, 0)}
	s := newSamplerAt(f, samplerOptions(time.Millisecond, time.Hour, watermill.NopLogger{}), clk.Now)
	defer s.close() // before goleak's check, when an assertion stops the test early
	require.Eventually(t, func() bool { return f.count("a") == 1 && f.count("b") == 1 }, 5*time.Second, time.Millisecond,
		"every topic recorded once at start")

	s.view(context.Background(), "a")
	require.Eventually(t, func() bool { return f.count("a") > 5 }, 5*time.Second, time.Millisecond, "a viewed topic every interval")
	assert.Equal(t, 1, f.count("b"), "b waits for the next HistoryInterval")
	clk.add(time.Hour)
	require.Eventually(t, func() bool { return f.count("b") == 2 }, 5*time.Second, time.Millisecond, "every topic again after HistoryInterval")

	s.view(context.Background(), "a") // an hour passed: a stays watched only when viewed again
	s.view(context.Background(), "b")
	f.set(func(f *fakeStore) { delete(f.known, "b") })
	require.Eventually(t, func() bool { return s.watched() == 1 }, 5*time.Second, time.Millisecond, "a deleted topic is dropped")
	clk.add(watchIdle + time.Second)
	require.Eventually(t, func() bool { return s.watched() == 0 }, 5*time.Second, time.Millisecond, "an idle topic is dropped")

	s.close()
	s.close()
	s.view(context.Background(), "a") // after close: no goroutine, no panic
}

// TestSamplerHistoryOff: with HistoryInterval -1 only viewed topics are recorded.
func TestSamplerHistoryOff(t *testing.T) {
	f := newFakeStore("a", "b")
	s := newSampler(f, samplerOptions(time.Millisecond, -1, watermill.NopLogger{}))
	defer s.close()
	s.view(context.Background(), "a")
	require.Eventually(t, func() bool { return f.count("a") > 3 }, 5*time.Second, time.Millisecond)
	assert.Zero(t, f.count("b"))
}

func TestSamplerLogsFailuresOncePerStreak(t *testing.T) {
	f := newFakeStore("a")
	logger := &countingLogger{}
	s := newSampler(f, samplerOptions(time.Millisecond, -1, logger))
	defer s.close()
	f.set(func(f *fakeStore) { f.failOn = "a" })
	s.view(context.Background(), "a")
	before := f.calls()
	require.Eventually(t, func() bool { return f.calls() > before+3 }, 5*time.Second, time.Millisecond, "the loop keeps trying")
	assert.Equal(t, 1, logger.errors(), "one log line per failure streak")
}

func TestRatePoints(t *testing.T) {
	at := func(sec int64) time.Time { return time.Unix(sec, 0) }
	samples := []admin.HistorySample{
		{Time: at(10), Published: 100, Groups: map[string]admin.HistoryGroup{"g": {EntriesRead: 50, Lag: 50}}},
		{Time: at(12), Published: 140, Length: 140, Retries: 3, Groups: map[string]admin.HistoryGroup{"g": {EntriesRead: 70, Lag: 70}, "new": {Lag: 140, TimeLag: time.Second}}},
		{Time: at(12), Published: 150}, // same time: skipped
		{Time: at(14), Published: 150, Groups: map[string]admin.HistoryGroup{"g": {EntriesRead: 10, Lag: 140}}},
	}
	points := ratePoints(samples, 0)
	require.Len(t, points, 2)
	assert.Equal(t, int64(12000), points[0].Time)
	assert.InDelta(t, 20, *points[0].PublishRate, 1e-9)
	assert.Equal(t, int64(3), points[0].Retries)
	assert.InDelta(t, 10, *points[0].Groups["g"].ConsumeRate, 1e-9)
	assert.Nil(t, points[0].Groups["new"].ConsumeRate, "a new group has no rate yet")
	assert.Equal(t, int64(140), points[0].Groups["new"].Lag)
	assert.Equal(t, int64(1000), points[0].Groups["new"].TimeLagMs)
	assert.InDelta(t, 0, *points[1].Groups["g"].ConsumeRate, 1e-9, "a reset (counter down) is 0, not negative")
	assert.InDelta(t, 5, *points[1].PublishRate, 1e-9, "measured from the last sample kept")
	assert.Equal(t, []string{"g", "new"}, pointGroups(points))
	assert.Empty(t, ratePoints(samples[:1], 0))
}

// TestRatePointsGap: two samples further apart than the gap bound make a gap: the later point
// says so and has no rates (a mean over the gap would draw a line across it), its levels stay.
func TestRatePointsGap(t *testing.T) {
	at := func(sec int64) time.Time { return time.Unix(sec, 0) }
	samples := []admin.HistorySample{
		{Time: at(10), Published: 100, Groups: map[string]admin.HistoryGroup{"g": {EntriesRead: 50, Lag: 50}}},
		{Time: at(12), Published: 140, Groups: map[string]admin.HistoryGroup{"g": {EntriesRead: 70, Lag: 70}}},
		{Time: at(200), Published: 900, Groups: map[string]admin.HistoryGroup{"g": {EntriesRead: 70, Lag: 830}}},
		{Time: at(202), Published: 910, Groups: map[string]admin.HistoryGroup{"g": {EntriesRead: 80, Lag: 830}}},
	}
	points := ratePoints(samples, 6*time.Second)
	require.Len(t, points, 3)
	assert.False(t, points[0].Gap)
	assert.True(t, points[1].Gap)
	assert.Nil(t, points[1].PublishRate)
	assert.Nil(t, points[1].Groups["g"].ConsumeRate)
	assert.Equal(t, int64(830), points[1].Groups["g"].Lag, "the lag at the point is known")
	assert.False(t, points[2].Gap)
	assert.InDelta(t, 5, *points[2].PublishRate, 1e-9)
}

// TestSamplerKeepsUnwrittenSamples: while Redis refuses the history's writes the sampler keeps
// the samples it took (the figures come from them) and why; once a record succeeds the
// refusal is gone, the samples of the recent window stay.
func TestSamplerKeepsUnwrittenSamples(t *testing.T) {
	f := newFakeStore("a")
	f.set(func(f *fakeStore) { f.refuse = true })
	s := newSampler(f, samplerOptions(time.Millisecond, -1, watermill.NopLogger{}))
	defer s.close()
	s.view(context.Background(), "a")
	require.Eventually(t, func() bool {
		got, err := s.notWritten("a")
		return len(got) >= 3 && errors.Is(err, admin.ErrWritesRefused)
	}, 5*time.Second, time.Millisecond)
	got, _ := s.notWritten("a")
	for i := 1; i < len(got); i++ {
		require.True(t, got[i-1].Time.Before(got[i].Time), "oldest first")
	}
	f.set(func(f *fakeStore) { f.refuse = false })
	require.Eventually(t, func() bool {
		_, err := s.notWritten("a")
		return err == nil
	}, 5*time.Second, time.Millisecond)
	kept, _ := s.notWritten("a")
	assert.GreaterOrEqual(t, len(kept), len(got), "the samples of the recent window stay")
}

// TestMergedAndFreshness: the samples not written follow the history's newest; figures
// from them are live; with none newer than three intervals the figures are stale.
func TestMergedAndFreshness(t *testing.T) {
	at := func(sec int64) time.Time { return time.Unix(1_700_000_000+sec, 0) }
	recorded := []admin.HistorySample{{Time: at(0)}, {Time: at(2)}}
	unwritten := []admin.HistorySample{{Time: at(1)}, {Time: at(4)}, {Time: at(6)}}
	rc := merged(recorded, unwritten)
	require.Len(t, rc, 4, "what the history has is not taken twice")
	assert.Equal(t, at(6), rc[3].Time)
	refused := fmt.Errorf("%w: OOM", admin.ErrWritesRefused)

	live := freshnessOf(recorded, rc, refused, at(7), 6*time.Second)
	assert.True(t, live.Live)
	assert.False(t, live.Stale)
	assert.Contains(t, live.Text, "live: figures from this dashboard's reads; the history is not written since 2023-11-14 22:13:22 UTC")

	stale := freshnessOf(recorded, recent(recorded), refused, at(60), 6*time.Second)
	assert.True(t, stale.Stale)
	assert.Equal(t, at(2), stale.staleSince())
	assert.Equal(t, "stale: figures as of the last sample, 2023-11-14 22:13:22 UTC (58s ago); the history is not written while Redis refuses writes", stale.Text)

	fresh := freshnessOf(recorded, recent(recorded), nil, at(3), 6*time.Second)
	assert.Equal(t, freshnessView{LastSample: jsonTime(at(2)), LastRecorded: jsonTime(at(2))}, fresh)
}

func TestThin(t *testing.T) {
	var samples []admin.HistorySample
	for i := range 1000 {
		samples = append(samples, admin.HistorySample{Published: int64(i)})
	}
	got := thin(samples, 400)
	assert.LessOrEqual(t, len(got), 400)
	assert.Equal(t, int64(999), got[len(got)-1].Published, "the newest is kept")
	for i := 1; i < len(got); i++ {
		require.Less(t, got[i-1].Published, got[i].Published, "oldest first")
	}
	assert.Len(t, thin(samples[:10], 400), 10)
}

func TestPreviewPayload(t *testing.T) {
	tests := []struct {
		name  string
		in    []byte
		limit int
		want  payloadView
	}{
		{"empty", nil, 16, payloadView{Size: 0, Encoding: encText}},
		{"text", []byte("héllo\n\tworld"), 64, payloadView{Size: 13, Encoding: encText, Preview: "héllo\n\tworld"}},
		{"markup stays text", []byte("<b>x</b>"), 64, payloadView{Size: 8, Encoding: encText, Preview: "<b>x</b>"}},
		{"cut on a rune boundary", []byte("aé"), 2, payloadView{Size: 3, Encoding: encText, Preview: "a", Truncated: true}},
		{"invalid UTF-8", []byte{0xff, 'a'}, 64, payloadView{Size: 2, Encoding: encHex,
			Preview: "00000000  ff 61                    |.a|\n"}},
		{"control characters", []byte("a\x00b"), 64, payloadView{Size: 3, Encoding: encHex,
			Preview: "00000000  61 00 62                 |a.b|\n"}},
		{"escape sequence", []byte("\x1b[31mred!"), 128, payloadView{Size: 9, Encoding: encHex,
			Preview: "00000000  1b 5b 33 31 6d 72 65 64  |.[31mred|\n00000008  21                       |!|\n"}},
		{"long binary", make([]byte, 100), 64, payloadView{Size: 100, Encoding: encHex, Truncated: true,
			Preview: "00000000  00 00 00 00 00 00 00 00  |........|\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, previewPayload(tt.in, tt.limit))
		})
	}
	data, enc := payloadData([]byte{0xff})
	assert.Equal(t, "/w==", data)
	assert.Equal(t, "base64", enc)
}

func TestCrossSite(t *testing.T) {
	tests := []struct {
		name, site, origin string
		cross              bool
	}{
		{"no markers (curl)", "", "", false},
		{"same origin", "same-origin", "http://dash:8080", false},
		{"typed by the user", "none", "", false},
		{"same site", "same-site", "", true},
		{"cross site", "cross-site", "", true},
		{"origin mismatch", "", "http://evil:8080", true},
		{"origin other port", "", "http://dash:9090", true},
		{"null origin", "", "null", true},
		{"origin matches", "", "http://DASH:8080", false},
		{"same origin behind a proxy that rewrites Host", "same-origin", "https://public.example", false},
		{"cross site with a matching origin", "cross-site", "http://dash:8080", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := http.NewRequest(http.MethodPost, "http://dash:8080/api/x", strings.NewReader("{}"))
			require.NoError(t, err)
			if tt.site != "" {
				r.Header.Set("Sec-Fetch-Site", tt.site)
			}
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			assert.Equal(t, tt.cross, crossSite(r))
		})
	}
}

func TestHostAllowed(t *testing.T) {
	allowed := []string{"127.0.0.1:8080", "localhost", "[::1]:8080"}
	for host, want := range map[string]bool{
		"127.0.0.1:8080": true, "127.0.0.1:9090": false, "localhost:1234": true, "LocalHost": true,
		"[::1]:8080": true, "[::1]:9": false, "evil.example:8080": false, "": false,
	} {
		assert.Equal(t, want, hostAllowed(allowed, host), host)
	}
}
