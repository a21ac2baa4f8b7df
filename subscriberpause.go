package streamq

import "time"

// Pause stops delivery on every subscription of the Subscriber: nothing more is read or
// handed to a handler, while the Subscriber keeps its leases and its place in each group
// (no rebalance) and messages already in flight finish normally. Messages published
// meanwhile wait in their partitions. Pause is safe for concurrent use; pausing a paused
// Subscriber does nothing. To pause a whole group across processes, see admin.PauseGroup.
func (s *Subscriber) Pause() {
	now := s.clock.Now()
	if s.pause.Set(true, now) {
		s.logger.Info("Delivery paused", nil)
		s.reportPause()
	}
}

// Resume ends a Pause: each partition goes on where it stopped, in order. Resuming a
// Subscriber that is not paused does nothing; a group an operator paused stays paused.
func (s *Subscriber) Resume() {
	if s.pause.Set(false, time.Time{}) {
		s.logger.Info("Delivery resumed", nil)
		s.reportPause()
	}
}

// Paused reports whether Pause is in effect (not whether an operator paused a group: see
// admin.GroupStats).
func (s *Subscriber) Paused() bool {
	paused, _ := s.pause.State()
	return paused
}

// InFlight is the number of messages handed to handlers and not yet acked or nacked, over
// every subscription of the Subscriber. Safe for concurrent use.
func (s *Subscriber) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := int64(0)
	for sub := range s.subs {
		n += sub.outlet.inFlightN.Load()
	}
	return int(n)
}

// reportPause tells the metrics of every subscription whether its delivery is paused.
func (s *Subscriber) reportPause() {
	s.mu.Lock()
	subs := make([]*subscription, 0, len(s.subs))
	for sub := range s.subs {
		subs = append(subs, sub)
	}
	s.mu.Unlock()
	for _, sub := range subs {
		sub.reportPause()
	}
}
