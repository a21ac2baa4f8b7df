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

// fakeCounters counts up on every read; unknown topics are admin.ErrTopicNotFound.
type fakeCounters struct {
	mu     sync.Mutex
	known  map[string]bool
	reads  map[string]int
	failOn string
	all    int
}

func (f *fakeCounters) TopicCounters(_ context.Context, topic string) (admin.TopicCounters, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.all++
	if !f.known[topic] {
		return admin.TopicCounters{}, fmt.Errorf("%w: %q", admin.ErrTopicNotFound, topic)
	}
	if topic == f.failOn {
		return admin.TopicCounters{}, errors.New("boom")
	}
	f.reads[topic]++
	n := int64(f.reads[topic])
	return admin.TopicCounters{Topic: topic, Time: time.UnixMilli(n * 1000), EntriesAdded: 10 * n}, nil
}

// calls counts every read, failed or not.
func (f *fakeCounters) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.all
}

func (f *fakeCounters) forget(topic string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.known, topic)
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

func (s *sampler) isRunning() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

func (s *sampler) watched() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.topics)
}

// TestSamplerLifecycle: the loop starts with the first view, keeps a bounded ring, drops a
// topic not viewed for watchIdle or deleted, exits when nothing is viewed, restarts on the
// next view, and stops for good on close with no goroutine left.
func TestSamplerLifecycle(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := &fakeCounters{known: map[string]bool{"a": true, "b": true}, reads: map[string]int{}}
	clk := &clock{now: time.Unix(1000, 0)}
	s := newSampler(f, time.Millisecond, 4*time.Millisecond, watermill.NopLogger{})
	s.now = clk.Now
	assert.False(t, s.isRunning(), "nothing viewed: no goroutine")

	_, err := s.watch(context.Background(), "nope")
	require.ErrorIs(t, err, admin.ErrTopicNotFound)
	got, err := s.watch(context.Background(), "a")
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.True(t, s.isRunning())
	require.Eventually(t, func() bool {
		got, _ = s.watch(context.Background(), "a")
		return len(got) == 5
	}, 5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool {
		got, _ = s.watch(context.Background(), "a")
		return got[0].EntriesAdded > 10
	}, 5*time.Second, time.Millisecond, "the oldest sample is dropped")
	assert.Len(t, got, 5, "window / interval + 1 samples")

	s.touch("b")
	f.forget("b")
	require.Eventually(t, func() bool { return s.watched() == 1 }, 5*time.Second, time.Millisecond, "a deleted topic is dropped")

	clk.add(watchIdle + time.Second)
	require.Eventually(t, func() bool { return !s.isRunning() }, 5*time.Second, time.Millisecond, "idle: the loop ends")
	assert.Zero(t, s.watched())

	_, err = s.watch(context.Background(), "a")
	require.NoError(t, err)
	assert.True(t, s.isRunning(), "a new view restarts it")
	s.close()
	s.close()
	got, err = s.watch(context.Background(), "a")
	require.NoError(t, err, "after close a view still reads once")
	assert.NotEmpty(t, got)
}

func TestSamplerLogsFailuresOncePerStreak(t *testing.T) {
	f := &fakeCounters{known: map[string]bool{"a": true}, reads: map[string]int{}}
	logger := &countingLogger{}
	s := newSampler(f, time.Millisecond, time.Second, logger)
	defer s.close()
	_, err := s.watch(context.Background(), "a")
	require.NoError(t, err)
	f.mu.Lock()
	f.failOn = "a"
	f.mu.Unlock()
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.topics["a"].failing && f.reads["a"] == 1
	}, 5*time.Second, time.Millisecond)
	before := f.calls()
	require.Eventually(t, func() bool { return f.calls() > before+3 }, 5*time.Second, time.Millisecond, "the loop keeps trying")
	assert.Equal(t, 1, logger.errors(), "one log line per failure streak")
}

func TestRatePoints(t *testing.T) {
	at := func(sec int64) time.Time { return time.Unix(sec, 0) }
	samples := []admin.TopicCounters{
		{Time: at(10), EntriesAdded: 100, Groups: map[string]admin.GroupCounters{"g": {EntriesRead: 50, Lag: 50}}},
		{Time: at(12), EntriesAdded: 140, Length: 140, Groups: map[string]admin.GroupCounters{"g": {EntriesRead: 70, Lag: 70}, "new": {Lag: 140}}},
		{Time: at(12), EntriesAdded: 150}, // same time: skipped
		{Time: at(14), EntriesAdded: 150, Groups: map[string]admin.GroupCounters{"g": {EntriesRead: 10, Lag: 140}}},
	}
	points := ratePoints(samples)
	require.Len(t, points, 2)
	assert.Equal(t, int64(12000), points[0].Time)
	assert.InDelta(t, 20, points[0].PublishRate, 1e-9)
	assert.InDelta(t, 10, *points[0].Groups["g"].ConsumeRate, 1e-9)
	assert.Nil(t, points[0].Groups["new"].ConsumeRate, "a new group has no rate yet")
	assert.Equal(t, int64(140), points[0].Groups["new"].Lag)
	assert.InDelta(t, 0, *points[1].Groups["g"].ConsumeRate, 1e-9, "a reset (counter down) is 0, not negative")
	assert.InDelta(t, 5, points[1].PublishRate, 1e-9, "measured from the last sample kept")
	assert.Equal(t, []string{"g", "new"}, pointGroups(points))
	assert.Empty(t, ratePoints(samples[:1]))
}

func TestRing(t *testing.T) {
	r := newRing[int](3)
	_, _, ok := r.lastTwo()
	assert.False(t, ok)
	assert.Empty(t, r.values())
	for i := 1; i <= 5; i++ {
		r.push(i)
	}
	assert.Equal(t, []int{3, 4, 5}, r.values())
	prev, last, ok := r.lastTwo()
	assert.True(t, ok)
	assert.Equal(t, [2]int{4, 5}, [2]int{prev, last})
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
