package main

import (
	"context"
	"sync"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
)

// refRouter is the zero-cost transport: messages made in memory before the clock starts,
// handed to the same Router as every adapter's, each lane waiting for its message's ack as
// an adapter does. It is the most any adapter could deliver through that Router.
const refRouter = "router-ceiling"

// ceilingLanes is how many messages the zero-cost transport has in flight at once: more
// than any adapter row here (streamq 8 partitions: 8), so the lanes are not its limit.
const ceilingLanes = 64

// ceilingBacklogs are the zero-cost transport's backlogs by topic, made by prefill.
type ceilingBacklogs struct {
	mu     sync.Mutex
	topics map[string][]*message.Message
}

func (b *ceilingBacklogs) put(topic string, n int, payload []byte) {
	msgs := make([]*message.Message, n)
	for i := range msgs {
		msgs[i] = message.NewMessage(watermill.NewUUID(), payload)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.topics == nil {
		b.topics = map[string][]*message.Message{}
	}
	b.topics[topic] = msgs
}

func (b *ceilingBacklogs) take(topic string) []*message.Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	msgs := b.topics[topic]
	delete(b.topics, topic)
	return msgs
}

// ceilingSubscriber delivers a backlog over ceilingLanes lanes, each sending its next
// message once the previous one was acked or nacked (a nacked one is sent again).
type ceilingSubscriber struct {
	backlogs *ceilingBacklogs
	wg       sync.WaitGroup
	stop     chan struct{}
	once     sync.Once
}

func newCeilingSubscriber(b *ceilingBacklogs) *ceilingSubscriber {
	return &ceilingSubscriber{backlogs: b, stop: make(chan struct{})}
}

func (s *ceilingSubscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	msgs := s.backlogs.take(topic)
	out := make(chan *message.Message)
	next := make(chan *message.Message, len(msgs))
	for _, m := range msgs {
		next <- m
	}
	close(next)
	var lanes sync.WaitGroup
	for range ceilingLanes {
		lanes.Add(1)
		go func() {
			defer lanes.Done()
			for m := range next {
				if !s.deliver(ctx, out, m) {
					return
				}
			}
		}()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		lanes.Wait()
		close(out)
	}()
	return out, nil
}

// deliver sends m until it is acked; false once the subscriber or ctx stops.
func (s *ceilingSubscriber) deliver(ctx context.Context, out chan<- *message.Message, m *message.Message) bool {
	for {
		select {
		case out <- m:
		case <-s.stop:
			return false
		case <-ctx.Done():
			return false
		}
		select {
		case <-m.Acked():
			return true
		case <-m.Nacked():
			m = m.Copy()
		case <-s.stop:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

func (s *ceilingSubscriber) Close() error {
	s.once.Do(func() { close(s.stop) })
	s.wg.Wait()
	return nil
}
