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
	// watchIdle is how long a topic is still sampled after its last view.
	watchIdle = 2 * time.Minute
	// maxWatched bounds how many topics are sampled at once.
	maxWatched = 256
	// minSampleTimeout bounds one topic's read when SampleInterval is shorter.
	minSampleTimeout = 5 * time.Second
)

// counterReader is what the sampler needs of admin.
type counterReader interface {
	TopicCounters(ctx context.Context, topic string) (admin.TopicCounters, error)
}

// series is the sampled history of one topic.
type series struct {
	viewed  time.Time // last view
	samples *ring[admin.TopicCounters]
	failing bool // the last read failed (logged once per streak)
}

// sampler reads the counters of the topics being viewed every interval into a bounded ring
// per topic. It runs one goroutine, started by the first view and ended when no topic is
// viewed any more or by close. Shutdown: close cancels the context of the reads and waits
// for the goroutine.
type sampler struct {
	adm      counterReader
	interval time.Duration
	keep     int
	log      watermill.LoggerAdapter
	now      func() time.Time

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	topics  map[string]*series
	running bool
	closed  bool
}

func newSampler(adm counterReader, interval, window time.Duration, log watermill.LoggerAdapter) *sampler {
	ctx, cancel := context.WithCancel(context.Background())
	return &sampler{
		adm: adm, interval: interval, keep: int(window/interval) + 1, log: log, now: time.Now,
		ctx: ctx, cancel: cancel, topics: map[string]*series{},
	}
}

// watch marks topic viewed and returns its samples, oldest first. A topic not sampled yet
// is read at once (with ctx), so an unknown topic is an error and a chart has a first point.
func (s *sampler) watch(ctx context.Context, topic string) ([]admin.TopicCounters, error) {
	if got, ok := s.viewed(topic); ok {
		return got, nil
	}
	c, err := s.adm.TopicCounters(ctx, topic)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.trackLocked(topic)
	if se == nil { // closed or too many topics: not sampled
		return []admin.TopicCounters{c}, nil
	}
	se.samples.push(c)
	return se.samples.values(), nil
}

// touch marks topic viewed, to be sampled from the next tick on.
func (s *sampler) touch(topic string) {
	if _, ok := s.viewed(topic); ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trackLocked(topic)
}

// viewed refreshes the view time of a sampled topic and returns its samples.
func (s *sampler) viewed(topic string) ([]admin.TopicCounters, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	se, ok := s.topics[topic]
	if !ok {
		return nil, false
	}
	se.viewed = s.now()
	return se.samples.values(), true
}

// trackLocked returns topic's series, adding it and starting the loop when needed; nil when
// closed or maxWatched topics are sampled already.
func (s *sampler) trackLocked(topic string) *series {
	if se, ok := s.topics[topic]; ok {
		se.viewed = s.now()
		return se
	}
	if s.closed || len(s.topics) >= maxWatched {
		return nil
	}
	se := &series{viewed: s.now(), samples: newRing[admin.TopicCounters](s.keep)}
	s.topics[topic] = se
	if !s.running {
		s.running = true
		s.wg.Add(1)
		go s.run()
	}
	return se
}

// lastTwo returns the newest two samples of topic, if it has two.
func (s *sampler) lastTwo(topic string) (prev, last admin.TopicCounters, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if se, found := s.topics[topic]; found {
		return se.samples.lastTwo()
	}
	return prev, last, false
}

// run samples every interval until no topic is viewed or the sampler is closed.
func (s *sampler) run() {
	defer s.wg.Done()
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
		}
		topics, more := s.due()
		if !more {
			return
		}
		for _, t := range topics {
			s.sample(t)
		}
	}
}

// due drops the topics not viewed for watchIdle and returns the others; more is false (and
// the loop marked stopped) when none is left.
func (s *sampler) due() (topics []string, more bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for t, se := range s.topics {
		if now.Sub(se.viewed) > watchIdle {
			delete(s.topics, t)
			continue
		}
		topics = append(topics, t)
	}
	if len(topics) == 0 || s.closed {
		s.running = false
		return nil, false
	}
	return topics, true
}

// sample reads one topic's counters and records them.
func (s *sampler) sample(topic string) {
	ctx, cancel := context.WithTimeout(s.ctx, max(s.interval, minSampleTimeout))
	defer cancel()
	c, err := s.adm.TopicCounters(ctx, topic)
	s.record(topic, c, err)
}

func (s *sampler) record(topic string, c admin.TopicCounters, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	se, ok := s.topics[topic]
	switch {
	case !ok:
		return
	case errors.Is(err, admin.ErrTopicNotFound):
		delete(s.topics, topic)
	case err != nil:
		if !se.failing && s.ctx.Err() == nil {
			s.log.Error("dashboard: sampling topic counters failed", err, watermill.LogFields{"topic": topic})
		}
		se.failing = true
	default:
		se.failing = false
		se.samples.push(c)
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
