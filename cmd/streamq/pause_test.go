package main

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
)

// groupMember is one running member of a group, counting what it receives.
type groupMember struct {
	sub    *streamq.Subscriber
	cancel context.CancelFunc
	got    *atomic.Int64
	done   chan struct{}
}

func (e *cliEnv) member(topic, group string, got *atomic.Int64) *groupMember {
	t := e.t
	sub := fastSubscriber(t, e.client, group, 0)
	ctx, cancel := context.WithCancel(e.ctx)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	m := &groupMember{sub: sub, cancel: cancel, got: got, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for msg := range ch {
			got.Add(1)
			msg.Ack()
		}
	}()
	t.Cleanup(m.stop)
	return m
}

func (m *groupMember) stop() {
	m.cancel()
	_ = m.sub.Close()
	<-m.done
}

func (e *cliEnv) publishN(topic string, from, n int) {
	msgs := make([]*message.Message, n)
	for i := range msgs {
		msgs[i] = message.NewMessage(watermill.NewUUID(), []byte("m"+strconv.Itoa(from+i)))
	}
	require.NoError(e.t, e.pub.Publish(topic, msgs...))
}

// TestCLIPauseAndResumeAGroup pauses a group of 3 running members with "streamq pause":
// every member stops within RebalanceInterval, one that restarts meanwhile stays paused,
// "streamq stats" shows the pause, and "streamq resume" lets all of them go on.
func TestCLIPauseAndResumeAGroup(t *testing.T) {
	e := newCLIEnv(t)
	const topic, group = "pausable", "workers"
	require.NoError(t, e.adm.CreateTopic(e.ctx, topic, 6))
	got := &atomic.Int64{}
	members := []*groupMember{e.member(topic, group, got), e.member(topic, group, got), e.member(topic, group, got)}
	e.publishN(topic, 0, 30)
	require.Eventually(t, func() bool { return got.Load() == 30 }, 20*time.Second, 10*time.Millisecond)

	out := e.ok("pause", topic, group)
	assert.Contains(t, out, "paused group")
	time.Sleep(3 * 150 * time.Millisecond) // every member reads the pause within RebalanceInterval (150 ms)
	members[0].stop()                      // a member restarts while the group is paused
	members[0] = e.member(topic, group, got)
	e.publishN(topic, 30, 60)
	time.Sleep(10 * 150 * time.Millisecond) // a window in which a delivery would show
	assert.Equal(t, int64(30), got.Load(), "delivered while the group was paused")
	assert.Contains(t, e.ok("stats", topic, group), "paused by an operator since")
	var stats statsView
	e.jsonOf(&stats, "stats", topic, group)
	assert.True(t, stats.Paused)

	assert.Contains(t, e.ok("resume", topic, group), "resumed group")
	require.Eventually(t, func() bool { return got.Load() == 90 }, 20*time.Second, 10*time.Millisecond)
	assert.Contains(t, e.ok("resume", topic, group), "was not paused")
	var wg sync.WaitGroup
	for _, m := range members {
		wg.Add(1)
		go func() { defer wg.Done(); m.stop() }()
	}
	wg.Wait()
}

// TestCLIPauseUnknownGroup refuses a group that does not exist on the topic.
func TestCLIPauseUnknownGroup(t *testing.T) {
	e := newCLIEnv(t)
	require.NoError(t, e.adm.CreateTopic(e.ctx, "pausable", 2))
	r := e.run("pause", "pausable", "nobody")
	assert.NotZero(t, r.code)
	assert.Contains(t, r.stderr, "consumer group not found")
}
