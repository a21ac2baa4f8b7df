// Package redisstreamtest runs watermill-redisstream v1.4.5, the system a migration to
// streamq starts from, in tests: its Publisher sends keyed messages, its Subscriber acks some
// and leaves some delivered and not acked (pending), as a live system does before the
// switch. Test support only.
package redisstreamtest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill-redisstream/pkg/redisstream"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// KeyMetadata is streamq's default partition key metadata; Publish sets it, and "customer"
// to the same key, and "seq" to the message's sequence number.
const KeyMetadata = "partition_key"

// Message is a message Publish sent.
type Message struct {
	UUID, Key, Payload string
	Seq                int
	Metadata           map[string]string
}

// keepOpen lends a client to watermill-redisstream, whose Publisher and Subscriber close the
// client they were given.
type keepOpen struct{ redis.UniversalClient }

func (keepOpen) Close() error { return nil }

// Publish sends n messages to stream with watermill-redisstream's Publisher, numbered from
// from on: message seq is keyed "k<seq % keys>" and its payload is {"order":seq}.
func Publish(t testing.TB, client redis.UniversalClient, stream string, from, n, keys int) []Message {
	t.Helper()
	pub, err := redisstream.NewPublisher(redisstream.PublisherConfig{Client: keepOpen{client}}, watermill.NopLogger{})
	require.NoError(t, err)
	defer func() { _ = pub.Close() }()
	sent := make([]Message, n)
	msgs := make([]*message.Message, n)
	for i := range msgs {
		seq := from + i
		key := "k" + strconv.Itoa(seq%keys)
		m := message.NewMessage(watermill.NewUUID(), []byte(fmt.Sprintf(`{"order":%d}`, seq)))
		m.Metadata.Set(KeyMetadata, key)
		m.Metadata.Set("customer", key)
		m.Metadata.Set("seq", strconv.Itoa(seq))
		msgs[i] = m
		sent[i] = Message{UUID: m.UUID, Key: key, Payload: string(m.Payload), Seq: seq, Metadata: maps.Clone(m.Metadata)}
	}
	require.NoError(t, pub.Publish(stream, msgs...))
	return sent
}

// Consume runs a watermill-redisstream Subscriber of group as consumer on a client of its own
// (a copy of client's options): it acks the first ack messages it receives, receives one more
// and never acks it, and closes. That one stays pending, with those the Subscriber had read
// ahead. It returns the acked UUIDs: the Subscriber hands over the next message only once the
// previous one's XACK returned. When it returns, no command of that Subscriber reaches Redis
// any more (its Close returns before its reading goroutine stopped: a gate holds that back).
func Consume(t testing.TB, client redis.UniversalClient, stream, group, consumer string, ack int) []string {
	t.Helper()
	own, shut := gated(t, client)
	defer shut()
	sub, err := redisstream.NewSubscriber(redisstream.SubscriberConfig{
		Client: keepOpen{own}, ConsumerGroup: group, Consumer: consumer, DisableIndefiniteInitialBlock: true,
	}, watermill.NopLogger{})
	require.NoError(t, err)
	defer func() { _ = sub.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ch, err := sub.Subscribe(ctx, stream)
	require.NoError(t, err)
	acked := make([]string, 0, ack)
	for {
		select {
		case m := <-ch:
			if len(acked) == ack {
				return acked // delivered, not acked
			}
			acked = append(acked, m.UUID)
			m.Ack()
		case <-ctx.Done():
			t.Fatalf("watermill-redisstream delivered %d of %d messages", len(acked), ack+1)
		}
	}
}

// NotAcked is sent without the acked UUIDs, in publish order: what the group still holds.
func NotAcked(sent []Message, acked ...[]string) []Message {
	done := map[string]bool{}
	for _, a := range acked {
		for _, u := range a {
			done[u] = true
		}
	}
	var out []Message
	for _, m := range sent {
		if !done[m.UUID] {
			out = append(out, m)
		}
	}
	return out
}

// gated returns a new client with client's options and a gate, and the function that shuts
// the gate (no more commands; those in flight are waited for) and closes the client.
func gated(t testing.TB, client redis.UniversalClient) (redis.UniversalClient, func()) {
	t.Helper()
	var own redis.UniversalClient
	switch c := client.(type) {
	case *redis.Client:
		own = redis.NewClient(c.Options())
	case *redis.ClusterClient:
		own = redis.NewClusterClient(c.Options())
	default:
		t.Fatalf("redisstreamtest: unsupported client %T", client)
	}
	g := &gate{}
	own.AddHook(g)
	return own, func() {
		g.mu.Lock()
		g.shut = true
		g.mu.Unlock()
		g.inFlight.Wait()
		_ = own.Close()
	}
}

// gate is a go-redis hook that, once shut, sends no more commands.
type gate struct {
	mu       sync.Mutex
	shut     bool
	inFlight sync.WaitGroup
}

var errGateShut = errors.New("redisstreamtest: the subscriber is closed")

func (g *gate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.shut {
		g.inFlight.Add(1)
	}
	return !g.shut
}

func (g *gate) DialHook(next redis.DialHook) redis.DialHook { return next }

func (g *gate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !g.enter() {
			cmd.SetErr(errGateShut)
			return errGateShut
		}
		defer g.inFlight.Done()
		return next(ctx, cmd)
	}
}

func (g *gate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !g.enter() {
			return errGateShut
		}
		defer g.inFlight.Done()
		return next(ctx, cmds)
	}
}
