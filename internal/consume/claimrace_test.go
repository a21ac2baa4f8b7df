package consume

import (
	"context"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/redistest"
)

// holdScanClaim is a go-redis hook that, once armed, lets Redis run the pending scan's
// claim (XAUTOCLAIM with an idle time) and holds its reply until an ack flush of the same
// stream has completed, or a while: the widest form of a claim racing an ack flush.
type holdScanClaim struct {
	stream, group string
	armed         atomic.Bool
	holding       atomic.Bool
	acked         chan struct{} // cap 1: an ack flush completed while the claim was held
	held          chan struct{} // closed when a claim's reply was held
	forgotten     func() bool   // the worker holds no acked id any more
}

func (h *holdScanClaim) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (h *holdScanClaim) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *holdScanClaim) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		args := cmd.Args()
		switch {
		case h.isScanClaim(args) && h.armed.CompareAndSwap(true, false):
			h.holding.Store(true)
			close(h.held)
			select {
			case <-h.acked:
				// The flush's XACK ran after the claim; let the worker drop the acked id
				// before the claim's reply is queued.
				waitFor(h.forgotten, time.Second)
			case <-time.After(500 * time.Millisecond): // the flush waits for the claim to queue
			}
			h.holding.Store(false)
		case h.isAck(args) && err == nil && h.holding.Load():
			select {
			case h.acked <- struct{}{}:
			default:
			}
		}
		return err
	}
}

// isScanClaim: XAUTOCLAIM stream group consumer min-idle-time start ..., with an idle time.
func (h *holdScanClaim) isScanClaim(args []any) bool {
	if len(args) < 5 || args[0] != "xautoclaim" || args[1] != h.stream {
		return false
	}
	idle, _ := strconv.ParseInt(fmtArg(args[4]), 10, 64)
	return idle > 0
}

// isAck: the ack script (EVALSHA sha 4 lease stream commit index token group ...).
func (h *holdScanClaim) isAck(args []any) bool {
	return len(args) > 9 && (args[0] == "evalsha" || args[0] == "eval") && args[4] == h.stream && args[8] == h.group
}

// waitFor polls cond until it holds or timeout passes.
func waitFor(cond func() bool, timeout time.Duration) {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(timeout)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			return
		}
	}
}

// holds reports whether a worker of the Consumer holds entry id (queued, in flight, or
// acked and waiting for the flush).
func holds(c *Consumer, id string) bool {
	for _, sub := range c.subscriptions() {
		sub.mu.Lock()
		for _, w := range sub.workers {
			if w.pos.Holds(id) {
				sub.mu.Unlock()
				return true
			}
		}
		sub.mu.Unlock()
	}
	return false
}

func fmtArg(a any) string {
	switch v := a.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	}
	return ""
}

// TestScanClaimRacingAnAckFlushDeliversNothingTwice: the pending scan claims an entry whose
// Ack is still waiting for its flush; Redis runs the claim just before the flush's XACK.
// The claimed entry is still held by the worker, so it is not delivered again.
func TestScanClaimRacingAnAckFlushDeliversNothingTwice(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	const topic = "scan-vs-ack"
	hook := &holdScanClaim{
		stream: space.PartitionStream(topic, 0), group: "g",
		acked: make(chan struct{}, 1), held: make(chan struct{}),
	}
	client.AddHook(hook)
	createTopic(t, client, topic, 1)
	cfg := testConfig(client, "g", "a")
	cfg.Reclaim.ScanInterval = 50 * time.Millisecond
	cfg.Reclaim.Idle = time.Millisecond             // an entry waiting for its ack flush is idle enough
	cfg.Acks.FlushInterval = 300 * time.Millisecond // the ack waits long enough for a scan
	c, ch := subscribe(t, cfg, topic)
	appendSeq(t, client, topic, 0, 0, 1)
	first := receive(t, ch)
	d, ok := DeliveryOf(first.Context())
	require.True(t, ok)
	hook.forgotten = func() bool { return !holds(c, d.StreamID) }
	hook.armed.Store(true)
	first.Ack()
	select {
	case <-hook.held:
	case <-time.After(10 * time.Second):
		t.Fatal("the pending scan did not claim the entry waiting for its ack flush")
	}
	appendSeq(t, client, topic, 0, 1, 2) // queued while the claim's reply is held
	m := receive(t, ch)
	m.Ack()
	require.Equal(t, "1", m.Metadata.Get("seq"), "seq 0 was delivered again")
	appendSeq(t, client, topic, 0, 2, 3) // after the claim was queued
	m = receive(t, ch)
	m.Ack()
	require.Equal(t, "2", m.Metadata.Get("seq"), "seq 0 was delivered again")
}
