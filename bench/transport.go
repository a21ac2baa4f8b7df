package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill-redisstream/pkg/redisstream"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
)

type kind int

const (
	kindStreamq kind = iota
	kindRedisstream
	kindGoRedis
	kindRouter // the zero-cost transport (ceiling.go): subscribe only
)

// Reference transports of the ratio columns.
const (
	refRedisstream = "redisstream"
	refGoRedis     = "go-redis"
)

// consumerGroup is the group every consumer of the benchmark uses.
const consumerGroup = "bench"

type transport struct {
	Name       string
	kind       kind
	partitions int
	plainXAdd  bool // streamq with Idempotency.Window -1: plain XADD appends
	byUUID     bool // streamq with Idempotency.ByUUID
	direct     bool // streamq consumed from Subscribe's channel, acked in place, no Router: subscribe only
}

var allTransports = []transport{
	{Name: "streamq-1p", kind: kindStreamq, partitions: 1},
	{Name: "streamq-8p", kind: kindStreamq, partitions: 8},
	{Name: "streamq-1p-plain", kind: kindStreamq, partitions: 1, plainXAdd: true},
	{Name: "streamq-8p-plain", kind: kindStreamq, partitions: 8, plainXAdd: true},
	{Name: "streamq-8p-uuid", kind: kindStreamq, partitions: 8, byUUID: true},
	{Name: "streamq-24p", kind: kindStreamq, partitions: 24},
	{Name: "streamq-1p-direct", kind: kindStreamq, partitions: 1, direct: true},
	{Name: "streamq-8p-direct", kind: kindStreamq, partitions: 8, direct: true},
	{Name: refRedisstream, kind: kindRedisstream},
	{Name: refGoRedis, kind: kindGoRedis},
	{Name: refRouter, kind: kindRouter},
}

// sender publishes: one call of send is one Publish call (streamq, redisstream) or one
// pipelined round trip of XADDs (go-redis).
type sender interface {
	send(ctx context.Context, payloads [][]byte) error
	close()
}

// goRedisFields are the stream entry fields the go-redis ceiling writes: the same three
// fields the Watermill adapters write (message UUID, empty metadata, payload).
func goRedisFields(payload []byte) []any {
	return []any{redisstream.UUIDHeaderKey, watermill.NewUUID(), "metadata", "", "payload", payload}
}

func (e *env) newSender(tr transport, topic string) (sender, error) {
	switch tr.kind {
	case kindStreamq:
		c := e.client()
		pub, err := streamq.NewPublisher(streamq.PublisherConfig{
			Client:                c,
			DefaultPartitionCount: tr.partitions,
			Trim:                  streamq.TrimConfig{MaxLen: benchMaxLen()},
			Replication:           streamq.ReplicationConfig{MinReplicas: benchMinReplicas()},
			Idempotency:           idempotency(tr),
			Pipeline:              streamq.PipelineConfig{Flushers: e.cfg.flushers},
		}, e.logger)
		if err != nil {
			_ = c.Close()
			return nil, err
		}
		return &streamqSender{pub: pub, c: c, topic: topic}, nil
	case kindRedisstream:
		c := e.client()
		pub, err := redisstream.NewPublisher(redisstream.PublisherConfig{Client: c}, e.logger)
		if err != nil {
			_ = c.Close()
			return nil, err
		}
		return &redisstreamSender{pub: pub, topic: topic}, nil
	default:
		return &goRedisSender{c: e.client(), streams: e.goRedisStreams(topic)}, nil
	}
}

// clusterStreams is how many streams the go-redis ceiling spreads a topic over on a cluster.
const clusterStreams = 24

// goRedisStreams are the streams of the go-redis ceiling for topic: the topic itself on one
// server; on a cluster clusterStreams streams, each its own hash tag {topic:N}, so that the
// slots (and the load) spread over the masters.
func (e *env) goRedisStreams(topic string) []string {
	if len(e.cluster) == 0 {
		return []string{topic}
	}
	out := make([]string, clusterStreams)
	for i := range out {
		out[i] = fmt.Sprintf("{%s:%d}", topic, i)
	}
	return out
}

func newMessages(payloads [][]byte) []*message.Message {
	msgs := make([]*message.Message, len(payloads))
	for i, p := range payloads {
		msgs[i] = message.NewMessage(watermill.NewUUID(), p)
	}
	return msgs
}

type streamqSender struct {
	pub   *streamq.Publisher
	c     redis.UniversalClient
	topic string
}

func (s *streamqSender) send(_ context.Context, payloads [][]byte) error {
	return s.pub.Publish(s.topic, newMessages(payloads)...)
}

func (s *streamqSender) close() {
	_ = s.pub.Close()
	_ = s.c.Close()
}

type redisstreamSender struct {
	pub   *redisstream.Publisher
	topic string
}

func (s *redisstreamSender) send(_ context.Context, payloads [][]byte) error {
	return s.pub.Publish(s.topic, newMessages(payloads)...)
}

func (s *redisstreamSender) close() { _ = s.pub.Close() } // closes its client

type goRedisSender struct {
	c       redis.UniversalClient
	streams []string     // one on a single server; round robin over them on a cluster
	next    atomic.Int64 // round-robin position
}

func (s *goRedisSender) send(ctx context.Context, payloads [][]byte) error {
	base := int(s.next.Add(int64(len(payloads))) - int64(len(payloads)))
	if len(payloads) == 1 {
		return s.c.XAdd(ctx, &redis.XAddArgs{Stream: s.streams[base%len(s.streams)], Values: goRedisFields(payloads[0])}).Err()
	}
	cmds, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, pl := range payloads {
			p.XAdd(ctx, &redis.XAddArgs{Stream: s.streams[(base+i)%len(s.streams)], Values: goRedisFields(pl)})
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, c := range cmds {
		if err := c.Err(); err != nil {
			return err
		}
	}
	return nil
}

func (s *goRedisSender) close() { _ = s.c.Close() }

// prefill writes n messages of payload to topic in the stream entry format tr's subscriber
// reads: streamq through its Publisher, 500 messages per Publish call (partition streams and
// topic registry); redisstream and go-redis with pipelined XADDs of the same three fields
// (redisstream's own marshaller for redisstream). 8 writers run at once.
func (e *env) prefill(ctx context.Context, tr transport, topic string, n int, payload []byte) error {
	const batch, writers = 500, 8
	var write func(ctx context.Context, count int) error
	switch tr.kind {
	case kindRouter:
		e.ceiling.put(topic, n, payload)
		return nil
	case kindStreamq:
		s, err := e.newSender(tr, topic)
		if err != nil {
			return err
		}
		defer s.close()
		payloads := make([][]byte, batch)
		for i := range payloads {
			payloads[i] = payload
		}
		write = func(ctx context.Context, count int) error { return s.send(ctx, payloads[:count]) }
	default:
		c := e.client()
		defer c.Close()
		var marshal redisstream.DefaultMarshallerUnmarshaller
		streams := []string{topic}
		if tr.kind == kindGoRedis {
			streams = e.goRedisStreams(topic)
		}
		var pos atomic.Int64
		write = func(ctx context.Context, count int) error {
			base := int(pos.Add(int64(count)) - int64(count))
			cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
				for i := 0; i < count; i++ {
					var values any
					if tr.kind == kindRedisstream {
						v, err := marshal.Marshal(topic, message.NewMessage(watermill.NewUUID(), payload))
						if err != nil {
							return err
						}
						values = v
					} else {
						values = goRedisFields(payload)
					}
					p.XAdd(ctx, &redis.XAddArgs{Stream: streams[(base+i)%len(streams)], Values: values})
				}
				return nil
			})
			if err != nil {
				return err
			}
			for _, c := range cmds {
				if err := c.Err(); err != nil {
					return err
				}
			}
			return nil
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				end := next.Add(batch)
				start := end - batch
				if start >= int64(n) {
					return
				}
				if err := write(ctx, int(min(end, int64(n))-start)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return fmt.Errorf("prefill %s: %w", tr.Name, err)
	}
	return ctx.Err()
}

// consumer consumes a topic and calls handle with each message's payload (read only).
type consumer interface {
	// stop stops consuming and returns how long that took.
	stop() time.Duration
}

func (e *env) startConsumer(ctx context.Context, tr transport, topic string, handle func(payload []byte)) (consumer, error) {
	if tr.kind == kindGoRedis {
		return e.startGoRedisConsumer(ctx, topic, handle)
	}
	if tr.kind == kindRouter {
		return e.startRouter(ctx, nil, newCeilingSubscriber(&e.ceiling), topic, func(msg *message.Message) error {
			handle(msg.Payload)
			return nil
		})
	}
	c := e.client()
	var sub message.Subscriber
	var err error
	if tr.kind == kindStreamq {
		sub, err = streamq.NewSubscriber(streamq.SubscriberConfig{
			Client:                c,
			ConsumerGroup:         consumerGroup,
			Read:                  streamq.ReadConfig{BatchCount: e.cfg.batchCount},
			DefaultPartitionCount: tr.partitions,
		}, e.logger)
	} else {
		sub, err = redisstream.NewSubscriber(redisstream.SubscriberConfig{
			Client:        c,
			ConsumerGroup: consumerGroup,
		}, e.logger)
	}
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	if tr.direct {
		return startDirect(ctx, c, sub, topic, handle)
	}
	return e.startRouter(ctx, c, sub, topic, func(msg *message.Message) error {
		handle(msg.Payload)
		return nil
	})
}

// closeClient closes c, when there is one (the zero-cost transport has none).
func closeClient(c redis.UniversalClient) {
	if c != nil {
		_ = c.Close()
	}
}

// startRouter runs a Router with handler on topic of sub until the consumer is stopped; the
// client c is closed with it.
func (e *env) startRouter(ctx context.Context, c redis.UniversalClient, sub message.Subscriber, topic string,
	handler message.NoPublishHandlerFunc) (consumer, error) {
	router, err := message.NewRouter(message.RouterConfig{}, e.logger)
	if err != nil {
		closeClient(c)
		return nil, err
	}
	router.AddConsumerHandler("bench", topic, sub, handler)
	rc := &routerConsumer{router: router, client: c, runErr: make(chan error, 1)}
	go func() { rc.runErr <- router.Run(ctx) }()
	select {
	case <-router.Running():
	case err := <-rc.runErr:
		closeClient(c)
		return nil, fmt.Errorf("router: %v", err)
	case <-ctx.Done():
		rc.stop()
		return nil, ctx.Err()
	}
	return rc, nil
}

// directConsumer reads a Subscriber's channel itself and acks each message in place, as go-redis
// alone does without a Router: what the adapter costs, without the Router's.
type directConsumer struct {
	sub    message.Subscriber
	client redis.UniversalClient
	cancel context.CancelFunc
	done   chan struct{}
}

func startDirect(ctx context.Context, c redis.UniversalClient, sub message.Subscriber, topic string, handle func([]byte)) (consumer, error) {
	ctx, cancel := context.WithCancel(ctx)
	ch, err := sub.Subscribe(ctx, topic)
	if err != nil {
		cancel()
		_ = sub.Close()
		closeClient(c)
		return nil, err
	}
	d := &directConsumer{sub: sub, client: c, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(d.done)
		for msg := range ch {
			handle(msg.Payload)
			msg.Ack()
		}
	}()
	return d, nil
}

func (d *directConsumer) stop() time.Duration {
	start := time.Now()
	d.cancel()
	_ = d.sub.Close()
	<-d.done
	took := time.Since(start)
	closeClient(d.client)
	return took
}

type routerConsumer struct {
	router *message.Router
	client redis.UniversalClient
	runErr chan error
}

func (r *routerConsumer) stop() time.Duration {
	start := time.Now()
	_ = r.router.Close() // closes the subscriber
	d := time.Since(start)
	closeClient(r.client) // redisstream closed it already: the error is expected
	return d
}

// goRedisConsumer is the ceiling: per stream (one on a single server, clusterStreams on a
// cluster) a loop of XREADGROUP COUNT batch, then one XACK for the batch.
type goRedisConsumer struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	client redis.UniversalClient
}

func (e *env) startGoRedisConsumer(ctx context.Context, topic string, handle func([]byte)) (consumer, error) {
	c := e.client()
	streams := e.goRedisStreams(topic)
	for _, stream := range streams {
		if err := c.XGroupCreateMkStream(ctx, stream, consumerGroup, "0").Err(); err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
			_ = c.Close()
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	g := &goRedisConsumer{cancel: cancel, client: c}
	count := int64(e.cfg.batchCount)
	for _, stream := range streams {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			ids := make([]string, 0, count)
			for ctx.Err() == nil {
				res, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{
					Group: consumerGroup, Consumer: "ceiling", Streams: []string{stream, ">"},
					Count: count, Block: 100 * time.Millisecond,
				}).Result()
				if err != nil {
					if !errors.Is(err, redis.Nil) && ctx.Err() == nil {
						e.logger.Error("go-redis XREADGROUP", err, nil)
						time.Sleep(50 * time.Millisecond)
					}
					continue
				}
				for _, xs := range res {
					ids = ids[:0]
					for _, m := range xs.Messages {
						p, _ := m.Values["payload"].(string)
						handle(unsafe.Slice(unsafe.StringData(p), len(p)))
						ids = append(ids, m.ID)
					}
					if len(ids) > 0 {
						if err := c.XAck(ctx, stream, consumerGroup, ids...).Err(); err != nil && ctx.Err() == nil {
							e.logger.Error("go-redis XACK", err, nil)
						}
					}
				}
			}
		}()
	}
	return g, nil
}

func (g *goRedisConsumer) stop() time.Duration {
	start := time.Now()
	g.cancel()
	g.wg.Wait()
	_ = g.client.Close()
	return time.Since(start)
}

// benchMaxLen is the Publishers' MaxLen: -1 (no length retention) unless BENCH_MAXLEN says
// otherwise (0: the library's default), so that the cost of length retention can be measured.
func benchMaxLen() int64 {
	if v, err := strconv.ParseInt(os.Getenv("BENCH_MAXLEN"), 10, 64); err == nil {
		return v
	}
	return -1
}

// benchMinReplicas is the Publishers' MinReplicas: 0 (off) unless BENCH_MIN_REPLICAS says
// otherwise, so that the cost of durable publishing can be measured.
func benchMinReplicas() int {
	if v, err := strconv.Atoi(os.Getenv("BENCH_MIN_REPLICAS")); err == nil && v > 0 {
		return v
	}
	return 0
}

// benchReplicas is how many replicas of the redis-server it starts the benchmark starts too:
// BENCH_REPLICAS, by default BENCH_MIN_REPLICAS (BENCH_REPLICAS=1 alone measures a replicated
// server without waiting for it).
func benchReplicas() int {
	if v, err := strconv.Atoi(os.Getenv("BENCH_REPLICAS")); err == nil && v >= 0 {
		return v
	}
	return benchMinReplicas()
}

// idempotency is the Idempotency of a streamq transport: the default, by UUID, or off (-1) for
// the plain-XADD rows that show what the idempotent append costs.
func idempotency(tr transport) streamq.IdempotencyConfig {
	switch {
	case tr.plainXAdd:
		return streamq.IdempotencyConfig{Window: -1}
	case tr.byUUID:
		return streamq.IdempotencyConfig{ByUUID: true}
	}
	return streamq.IdempotencyConfig{}
}
