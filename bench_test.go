package streamq_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// BenchmarkPublishParallel: 64 goroutines per core-ish publishing one 64-byte message per
// Publish call, as a Watermill app does; coalescing turns them into pipelines.
func BenchmarkPublishParallel(b *testing.B) {
	_, client := streamqtest.StartRedis(b)
	pub := streamqtest.NewPublisher(b, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 8, Trim: streamq.TrimConfig{MaxLen: -1}})
	payload := make([]byte, 64)
	b.SetParallelism(32)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := pub.Publish("bench", message.NewMessage(watermill.NewUUID(), payload)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msg/s")
}

// BenchmarkConsume: handle a backlog of 64-byte messages through one subscription, acking
// each, with 1 and 8 partitions.
func BenchmarkConsume(b *testing.B) {
	for _, parts := range []int{1, 8} {
		b.Run(strconv.Itoa(parts)+"-partitions", func(b *testing.B) {
			_, client := streamqtest.StartRedis(b)
			topic := "consume"
			pub := streamqtest.NewPublisher(b, streamq.PublisherConfig{Client: client, DefaultPartitionCount: parts, Trim: streamq.TrimConfig{MaxLen: -1}})
			payload := make([]byte, 64)
			for sent := 0; sent < b.N; {
				n := min(500, b.N-sent)
				msgs := make([]*message.Message, n)
				for i := range msgs {
					msgs[i] = message.NewMessage(watermill.NewUUID(), payload)
				}
				if err := pub.Publish(topic, msgs...); err != nil {
					b.Fatal(err)
				}
				sent += n
			}
			cfg := streamq.SubscriberConfig{Client: client, ConsumerGroup: "bench", DefaultPartitionCount: parts}
			sub := streamqtest.NewSubscriber(b, cfg)
			b.ReportAllocs()
			b.ResetTimer()
			ch, err := sub.Subscribe(context.Background(), topic)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < b.N; i++ {
				(<-ch).Ack()
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msg/s")
		})
	}
}

// BenchmarkCeilingPipelinedXAdd is go-redis alone: 100 XADDs of 64 bytes per round trip, the
// ceiling BenchmarkPublishParallel is compared with (ratios within one run).
func BenchmarkCeilingPipelinedXAdd(b *testing.B) {
	_, client := streamqtest.StartRedis(b)
	ctx := context.Background()
	payload := make([]byte, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for sent := 0; sent < b.N; sent += 100 {
		pipe := client.Pipeline()
		for i := 0; i < min(100, b.N-sent); i++ {
			pipe.XAdd(ctx, &redis.XAddArgs{Stream: "ceiling", Values: map[string]any{
				streamq.UUIDField: watermill.NewUUID(), streamq.MetadataField: "", streamq.PayloadField: payload}})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msg/s")
}

// BenchmarkCeilingCoalescedXAdd is the calling pattern of BenchmarkPublishParallel (64
// goroutines, one message per call, each waiting for its own reply) served by the least a
// coalescing publisher can do: a channel to one flusher, which sends whatever is queued as
// one pipeline and wakes the callers. No routing, encoding or per-call error handling: the
// ceiling for this calling pattern, beside BenchmarkPublishParallel in the same run.
func BenchmarkCeilingCoalescedXAdd(b *testing.B) {
	_, client := streamqtest.StartRedis(b)
	ctx := context.Background()
	type call struct {
		args []any
		cmd  *redis.Cmd
		done chan struct{}
	}
	queue := make(chan *call, 4096)
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		for c := range queue {
			calls := []*call{c}
		gather:
			for len(calls) < 1000 {
				select {
				case c, ok := <-queue:
					if !ok {
						break gather
					}
					calls = append(calls, c)
				default:
					break gather
				}
			}
			_, _ = client.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, c := range calls {
					c.cmd = p.Do(ctx, c.args...)
				}
				return nil
			})
			for _, c := range calls {
				close(c.done)
			}
		}
	}()
	payload := make([]byte, 64)
	b.SetParallelism(32)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m := message.NewMessage(watermill.NewUUID(), payload)
			c := &call{args: []any{"xadd", "ceiling", "*", streamq.UUIDField, m.UUID, streamq.MetadataField, "", streamq.PayloadField, []byte(m.Payload)},
				done: make(chan struct{})}
			queue <- c
			<-c.done
			if err := c.cmd.Err(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	close(queue)
	<-flushed
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msg/s")
}
