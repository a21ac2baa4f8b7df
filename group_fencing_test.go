package streamq_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// gateProxy forwards TCP connections to target; while closed, no byte passes in either
// direction, as if the client process were stopped (SIGSTOP) or cut off.
type gateProxy struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	open   chan struct{} // closed while traffic flows
	conns  []net.Conn
}

func newGateProxy(t *testing.T, target string) *gateProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &gateProxy{l: l, target: target, open: make(chan struct{})}
	close(p.open)
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *gateProxy) addr() string { return p.l.Addr().String() }

func (p *gateProxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go p.pipe(c, s)
		go p.pipe(s, c)
	}
}

func (p *gateProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			<-p.gate()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				_ = dst.Close()
			}
			return
		}
	}
}

func (p *gateProxy) gate() chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.open
}

func (p *gateProxy) pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.open = make(chan struct{})
}

func (p *gateProxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
	default:
		close(p.open)
	}
}

func (p *gateProxy) close() {
	p.resume()
	_ = p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
}

// TestStaleOwnerIsFencedAfterAPause: owner a is cut off (as by SIGSTOP) with a message in its
// handler for longer than the lease TTL. b takes the partition over and handles the message;
// when a comes back its ack is refused by the fence and it delivers nothing more.
func TestStaleOwnerIsFencedAfterAPause(t *testing.T) {
	t.Parallel()
	srv, direct := streamqtest.StartRedis(t)
	proxy := newGateProxy(t, srv.Addr())
	viaProxy := redis.NewClient(&redis.Options{Addr: proxy.addr(), ReadTimeout: 500 * time.Millisecond,
		WriteTimeout: 500 * time.Millisecond, MaxRetries: -1})
	defer viaProxy.Close()
	topic := "fenced-owner"
	ttl := func(c *streamq.SubscriberConfig) { c.Membership.LeaseTTL = 1500 * time.Millisecond }

	subA, chA := streamqtest.SubscribeMember(t, viaProxy, topic, "g", "a", 1, ttl)
	streamqtest.WaitOwners(t, direct, topic, "g", 1, streamqtest.Balanced(map[string]int{"a": 1}))
	_, chB := streamqtest.SubscribeMember(t, direct, topic, "g", "b", 1, ttl)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: direct})
	streamqtest.PublishKeyed(t, pub, topic, 0, 1, 1)

	held := <-chA // a's handler holds it, unacked
	proxy.pause()
	var fromB *streamqtest.Received
	select {
	case m := <-chB:
		r := streamqtest.Received{}
		r.Count, _ = streamq.DeliveryCountFromCtx(m.Context())
		r.Member, _ = streamq.ConsumerFromCtx(m.Context())
		fromB = &r
		assert.Equal(t, held.UUID, m.UUID, "b takes over the message a was holding")
		m.Ack()
	case <-time.After(15 * time.Second):
		t.Fatal("b never took the partition over")
	}
	assert.GreaterOrEqual(t, fromB.Count, int64(2))
	require.Eventually(t, func() bool { return subA.Stats().LeasesLost >= 1 }, 10*time.Second, 20*time.Millisecond,
		"a noticed it lost its lease")

	proxy.resume()
	held.Ack() // too late: a's worker stopped, and any ack it sends fails the fence
	streamqtest.PublishKeyed(t, pub, topic, 1, 3, 1)
	for i := 0; i < 2; i++ {
		select {
		case m := <-chB:
			m.Ack()
		case <-time.After(10 * time.Second):
			t.Fatal("b stopped receiving")
		}
	}
	select {
	case m, ok := <-chA:
		if ok {
			t.Fatalf("stale owner a delivered %s after losing the partition", m.UUID)
		}
	case <-time.After(500 * time.Millisecond):
	}
	assert.Equal(t, []string{"b"}, streamqtest.LeaseOwners(t, direct, topic, "g", 1))
	require.Eventually(t, func() bool {
		p, err := direct.XPending(context.Background(), "stream:topic:{"+topic+":p:0}", "g").Result()
		return err == nil && p.Count == 0
	}, 5*time.Second, 20*time.Millisecond, "b acked everything; nothing is left pending for a")
}

// stealBeforeAck is a go-redis hook that, once armed, gives a partition's lease to another
// owner just before the next ack script on its stream is sent: the lease is lost at the last
// moment, with no renewal or rebalance in between to notice it first.
type stealBeforeAck struct {
	other         *redis.Client // a client without this hook
	stream, lease string
	armed         atomic.Bool
}

func (h *stealBeforeAck) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *stealBeforeAck) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *stealBeforeAck) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		isAck := len(args) > 4 && (args[0] == "evalsha" || args[0] == "eval") && args[3] == h.lease && args[4] == h.stream // ack.lua; seen.lua names the stream second too
		if isAck && h.armed.CompareAndSwap(true, false) {
			if err := h.other.Set(ctx, h.lease, "someone-else#x.1", time.Minute).Err(); err != nil {
				return err
			}
		}
		return next(ctx, cmd)
	}
}

// TestFinalFlushAfterLosingTheLeaseIsLogged: a member closes while an ack still waits for its
// flush, and another token owns the lease by the time the final flush is sent. The fence
// refuses the flush, Close says so in the log, and the entry stays pending for the next owner.
func TestFinalFlushAfterLosingTheLeaseIsLogged(t *testing.T) {
	t.Parallel()
	srv, client := streamqtest.StartRedis(t)
	const topic = "lapsed-close"
	other := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = other.Close() })
	hook := &stealBeforeAck{
		other: other, stream: keys.New("", "").PartitionStream(topic, 0),
		lease: keys.New("", "").Lease(topic, 0, "g"),
	}
	client.AddHook(hook)
	logs := watermill.NewCaptureLogger()
	cfg := streamqtest.FastSub(client, "g")
	cfg.DefaultPartitionCount = 1
	cfg.Acks.FlushInterval = time.Hour // the only ack flush is the final one
	sub, err := streamq.NewSubscriber(cfg, logs)
	require.NoError(t, err)
	ch, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	streamqtest.PublishKeyed(t, pub, topic, 0, 1, 1)
	hook.armed.Store(true)
	streamqtest.ReceiveOne(t, ch, 10*time.Second).Ack()
	require.NoError(t, sub.Close())

	require.False(t, hook.armed.Load(), "the final flush was sent")
	var logged bool
	for _, m := range logs.Captured()[watermill.ErrorLogLevel] {
		logged = logged || strings.HasPrefix(m.Msg, "Acks not applied")
	}
	assert.True(t, logged, "the refused final flush is logged")
	pending, err := client.XPending(context.Background(), hook.stream, "g").Result()
	require.NoError(t, err)
	assert.EqualValues(t, 1, pending.Count, "the entry stays pending for the next owner")
}

// TestLeaseLostWhileDrainingIsCounted: a member closes while its handler holds a message, so
// its partition drains for up to CloseTimeout (a minute here) and the lease is kept alive
// meanwhile. Another token takes the lease during the drain: the member counts and logs the
// lost lease, stops waiting for the handler at once (its ack could no longer be applied),
// and Close returns long before CloseTimeout; the message stays pending for the next owner.
func TestLeaseLostWhileDrainingIsCounted(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	const topic = "lost-in-drain"
	lease := keys.New("", "").Lease(topic, 0, "g")
	logs := watermill.NewCaptureLogger()
	cfg := streamqtest.FastSub(client, "g")
	cfg.DefaultPartitionCount = 1
	cfg.Delivery.CloseTimeout = time.Minute
	sub, err := streamq.NewSubscriber(cfg, logs)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	ch, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	streamqtest.PublishKeyed(t, pub, topic, 0, 1, 1)
	held := streamqtest.ReceiveOne(t, ch, 10*time.Second) // never acked by the handler

	closed := make(chan error, 1)
	go func() { closed <- sub.Close() }()
	// Close stops delivery and starts the drain at once; the steal below lands during it
	// (were it to land first, the running worker would count it as well: the test would then
	// prove less, not pass wrongly).
	require.Equal(t, int64(1), client.Exists(context.Background(), lease).Val(), "the member holds the lease")
	require.NoError(t, client.Set(context.Background(), lease, "another-member:token", time.Minute).Err())

	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("Close still waits for a handler whose ack can no longer be applied")
	}
	assert.EqualValues(t, 1, sub.Stats().LeasesLost, "the lease lost during the drain is counted")
	var logged bool
	for _, m := range logs.Captured()[watermill.ErrorLogLevel] {
		logged = logged || strings.HasPrefix(m.Msg, "Partition lease lost")
	}
	assert.True(t, logged, "the lost lease is logged")
	assert.Error(t, held.Context().Err(), "the held message's context is cancelled")
	pending, err := client.XPending(context.Background(), keys.New("", "").PartitionStream(topic, 0), "g").Result()
	require.NoError(t, err)
	assert.EqualValues(t, 1, pending.Count, "the message stays pending for the next owner")
}
