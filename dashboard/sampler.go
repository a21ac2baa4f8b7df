package dashboard

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/admin"
)

const (
	// watchIdle is how long a topic is still sampled every SampleInterval after its last view.
	watchIdle = 2 * time.Minute
	// maxWatched bounds how many topics are sampled every SampleInterval at once.
	maxWatched = 256
	// minSampleTimeout bounds one topic's read when SampleInterval is shorter.
	minSampleTimeout = 5 * time.Second
	// gapShare is the share of a writer's interval under which another writer's sample makes
	// its own needless: two dashboards sampling a topic every 2 s add one sample every 2 s.
	gapShare = 0.75
)

// historyStore is what the sampler needs of admin.
type historyStore interface {
	ListTopics(ctx context.Context) ([]string, error)
	TakeSample(ctx context.Context, topic string) (admin.HistorySample, error)
	RecordHistory(ctx context.Context, s admin.HistorySample, opts admin.HistoryOptions) (bool, error)
}

// watch is the sampling state of one topic.
type watch struct {
	viewed  time.Time // last view; zero for a topic only sampled in the background
	sampled time.Time // last sample this process took
}

// sampler writes the topics' history into Redis (admin.RecordHistory), where every
// dashboard and every reload reads it back: every topic every historyInterval (unless that
// is off), and the topics being viewed every interval. It runs one goroutine from
// newSampler to close. Shutdown: close cancels the context of the reads and waits for it.
type sampler struct {
	adm       historyStore
	interval  time.Duration // viewed topics
	every     time.Duration // every topic; 0: off
	retention time.Duration
	log       watermill.LoggerAdapter
	now       func() time.Time

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	topics  map[string]*watch
	failing map[string]bool // topics whose last read failed (logged once per streak)
	listed  time.Time       // when every topic was last sampled
	closed  bool
	// unwritten are, per topic, the samples this process took but could not record (Redis
	// refused the history's write), within recentWindow: the figures come from them while the
	// history cannot be written.
	unwritten map[string]*unwritten
}

// unwritten is what a sampler took of one topic and could not record.
type unwritten struct {
	samples []admin.HistorySample // oldest first, at most maxUnwritten
	err     error                 // why the last record failed; nil once one succeeded
}

// maxUnwritten bounds the samples kept of one topic that could not be recorded.
const maxUnwritten = 512

func newSampler(adm historyStore, o Options) *sampler { return newSamplerAt(adm, o, time.Now) }

// newSamplerAt is newSampler on the clock now.
func newSamplerAt(adm historyStore, o Options, now func() time.Time) *sampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &sampler{
		adm: adm, interval: o.SampleInterval, every: max(o.HistoryInterval, 0), retention: o.HistoryRetention,
		log: o.Logger, now: now, ctx: ctx, cancel: cancel, topics: map[string]*watch{}, failing: map[string]bool{},
		unwritten: map[string]*unwritten{},
	}
	s.wg.Add(1)
	go s.run()
	return s
}

// view marks topic viewed, to be sampled every interval. A topic this process has not
// sampled yet is sampled at once (with ctx), so its chart ends now.
func (s *sampler) view(ctx context.Context, topic string) {
	s.mu.Lock()
	w := s.trackLocked(topic)
	fresh := w != nil && w.sampled.IsZero()
	if w != nil {
		w.viewed = s.now()
	}
	s.mu.Unlock()
	if fresh {
		s.sample(ctx, topic, s.interval)
	}
}

// trackLocked returns topic's state, adding it; nil when closed or maxWatched topics are
// viewed already.
func (s *sampler) trackLocked(topic string) *watch {
	if w, ok := s.topics[topic]; ok {
		return w
	}
	if s.closed || len(s.topics) >= maxWatched {
		return nil
	}
	w := &watch{}
	s.topics[topic] = w
	return w
}

// run samples every interval until the sampler is closed.
func (s *sampler) run() {
	defer s.wg.Done()
	s.sampleAll()
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
		}
		for _, t := range s.due() {
			s.sample(s.ctx, t, s.interval)
		}
		s.sampleAll()
	}
}

// due drops the topics not viewed for watchIdle and returns the others.
func (s *sampler) due() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var out []string
	for t, w := range s.topics {
		if now.Sub(w.viewed) > watchIdle {
			delete(s.topics, t)
			continue
		}
		out = append(out, t)
	}
	return out
}

// sampleAll samples every registered topic once every s.every (when on).
func (s *sampler) sampleAll() {
	s.mu.Lock()
	due := s.every > 0 && s.now().Sub(s.listed) >= s.every
	if due {
		s.listed = s.now()
	}
	s.mu.Unlock()
	if !due {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, max(s.every, minSampleTimeout))
	defer cancel()
	topics, err := s.adm.ListTopics(ctx)
	if err != nil {
		s.fail("", err)
		return
	}
	for _, t := range topics {
		s.sample(ctx, t, s.every)
	}
}

// sample reads one topic's sample and records it, unless some process recorded one less
// than gapShare of interval ago.
func (s *sampler) sample(ctx context.Context, topic string, interval time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, max(s.interval, minSampleTimeout))
	defer cancel()
	smp, err := s.adm.TakeSample(ctx, topic)
	if err == nil {
		_, err = s.adm.RecordHistory(ctx, smp, admin.HistoryOptions{
			Interval: time.Duration(float64(interval) * gapShare), Retention: s.retention,
		})
		s.keep(topic, smp, err)
	}
	s.record(topic, err)
}

// keep remembers smp, which could not be recorded for err (nil: it was), for the figures of
// the recent window; older samples than that are dropped.
func (s *sampler) keep(topic string, smp admin.HistorySample, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.unwritten[topic]
	if u == nil && err == nil {
		return
	}
	if u == nil {
		u = &unwritten{}
		s.unwritten[topic] = u
	}
	u.err = err
	if err != nil {
		u.samples = append(u.samples, smp)
	}
	u.prune(smp.Time.Add(-recentWindow))
	if len(u.samples) == 0 && u.err == nil {
		delete(s.unwritten, topic)
	}
}

// prune drops the samples before from, and the oldest beyond maxUnwritten.
func (u *unwritten) prune(from time.Time) {
	i := 0
	for i < len(u.samples) && (u.samples[i].Time.Before(from) || len(u.samples)-i > maxUnwritten) {
		i++
	}
	u.samples = u.samples[i:]
}

// notWritten returns the samples of topic this process took but could not record, oldest
// first, and why the latest record failed (nil: it succeeded, or none was tried).
func (s *sampler) notWritten(topic string) ([]admin.HistorySample, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.unwritten[topic]
	if u == nil {
		return nil, nil
	}
	return append([]admin.HistorySample(nil), u.samples...), u.err
}

func (s *sampler) record(topic string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case errors.Is(err, admin.ErrTopicNotFound):
		delete(s.topics, topic)
		delete(s.failing, topic)
		delete(s.unwritten, topic)
	case err != nil:
		if !s.failing[topic] {
			s.failLocked(topic, err)
		}
		s.failing[topic] = true
	default:
		delete(s.failing, topic)
		if w := s.topics[topic]; w != nil {
			w.sampled = s.now()
		}
	}
}

func (s *sampler) fail(topic string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failLocked(topic, err)
}

func (s *sampler) failLocked(topic string, err error) {
	switch {
	case s.ctx.Err() != nil:
	case errors.Is(err, admin.ErrWritesRefused):
		s.log.Info("dashboard: the topic's history is not written while Redis refuses writes; its rates and lag come from this dashboard's reads meanwhile",
			watermill.LogFields{"topic": topic, "err": err.Error()})
	default:
		s.log.Error("dashboard: sampling topic history failed", err, watermill.LogFields{"topic": topic})
	}
}

// close stops the loop and waits for it. Safe to call more than once.
func (s *sampler) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
}
