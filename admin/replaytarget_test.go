package admin_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
)

// groupCounter runs group on topic and counts, per payload, what its handler receives;
// fail is the payload group dead-letters (none: it acks everything).
type groupCounter struct {
	mu  sync.Mutex
	got map[string]int
}

func (g *groupCounter) count(payload string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.got[payload]
}

func runGroup(t *testing.T, e *env, topic, group, fail string) *groupCounter {
	t.Helper()
	sub, err := streamq.NewSubscriber(fastSub(e.client, group, 1), watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	ch, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	c := &groupCounter{got: map[string]int{}}
	go func() {
		for m := range ch {
			p := string(m.Payload)
			c.mu.Lock()
			c.got[p]++
			first := c.got[p] == 1
			c.mu.Unlock()
			if p == fail && first {
				_ = streamq.DeadLetter(m, nil)
				m.Nack()
				continue
			}
			m.Ack()
		}
	}()
	return c
}

// TestReplayGoesToTheFailingGroup: group A dead-letters a message that group B acked. A
// replay (admin's, and a DLQ handler's) is delivered to A only; with AllGroups to both;
// ReplayAll run twice replays once; a dry run replays nothing.
func TestReplayGoesToTheFailingGroup(t *testing.T) {
	e := newEnv(t)
	const topic = "replay-target"
	require.NoError(t, e.adm.CreateTopic(context.Background(), topic, 1))
	a, b := runGroup(t, e, topic, "a", "bad"), runGroup(t, e, topic, "b", "")
	require.NoError(t, e.pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("bad"))))
	require.Eventually(t, func() bool { return e.size(topic) == 1 && b.count("bad") == 1 }, 10*time.Second, 10*time.Millisecond)
	letter := e.entries(topic)[0]
	assert.Equal(t, "a", letter.Group)
	assert.True(t, letter.ReplayedAt.IsZero())

	n, err := e.adm.ReplayAll(context.Background(), topic, 0, nil, admin.ReplayOptions{DryRun: true})
	require.NoError(t, err)
	assert.Equal(t, 1, n, "a dry run counts the letter")
	assert.Equal(t, int64(1), e.totalStreamLen(topic, 1), "a dry run appends nothing")

	n, err = e.adm.ReplayAll(context.Background(), topic, 0, nil, admin.ReplayOptions{})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	require.Eventually(t, func() bool { return a.count("bad") == 2 }, 10*time.Second, 10*time.Millisecond, "group a got the replay")
	time.Sleep(500 * time.Millisecond) // group b would have it by now
	assert.Equal(t, 1, b.count("bad"), "group b, which acked the message, got the replay")
	marked := e.entries(topic)[0]
	assert.False(t, marked.ReplayedAt.IsZero(), "the letter is marked as replayed")
	assert.NotEmpty(t, marked.ReplayedAs)

	n, err = e.adm.ReplayAll(context.Background(), topic, 0, nil, admin.ReplayOptions{})
	require.NoError(t, err)
	assert.Zero(t, n, "replayed before: skipped")
	n, err = e.adm.ReplayAll(context.Background(), topic, 0, nil, admin.ReplayOptions{Again: true, AllGroups: true})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	require.Eventually(t, func() bool { return a.count("bad") == 3 && b.count("bad") == 2 }, 10*time.Second, 10*time.Millisecond,
		"a replay to every group reaches both")
}

// TestHandlerReplayGoesToTheFailingGroup: a DLQ handler's Replay reaches the group that failed
// the message only; ReplayToAllGroups reaches every group.
func TestHandlerReplayGoesToTheFailingGroup(t *testing.T) {
	e := newEnv(t)
	const topic = "handler-replay-target"
	require.NoError(t, e.adm.CreateTopic(context.Background(), topic, 1))
	a, b := runGroup(t, e, topic, "a", "bad"), runGroup(t, e, topic, "b", "")
	require.NoError(t, e.pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("bad"))))
	require.Eventually(t, func() bool { return e.size(topic) == 1 && b.count("bad") == 1 }, 10*time.Second, 10*time.Millisecond)

	fixers, err := streamq.NewSubscriber(fastSub(e.client, "fixers", 1), watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = fixers.Close() })
	ch, err := fixers.Subscribe(context.Background(), streamq.DLQTopic(topic))
	require.NoError(t, err)
	letter := <-ch
	streamq.Replay(letter)
	letter.Ack()
	require.Eventually(t, func() bool { return a.count("bad") == 2 }, 10*time.Second, 10*time.Millisecond, "group a got the replay")
	time.Sleep(500 * time.Millisecond)
	assert.Equal(t, 1, b.count("bad"), "group b, which acked the message, got the replay")

	_, err = e.adm.ReplayDeadLetter(context.Background(), topic, 0, e.entries(topic)[0].ID, admin.ReplayOptions{AllGroups: true, Again: true}) // the handler replayed it
	require.NoError(t, err)
	require.Eventually(t, func() bool { return a.count("bad") == 3 && b.count("bad") == 2 }, 10*time.Second, 10*time.Millisecond)
}
