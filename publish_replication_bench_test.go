package streamq_test

import (
	"strconv"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// BenchmarkPublishReplicated measures what MinReplicas 1 costs, on a master with one replica
// running in both cases: "serial" is one goroutine publishing one message per call (ns/op is
// a Publish's latency), "parallel" is BenchmarkPublishParallel (single-message calls from 64
// goroutines, coalesced into pipelines), "parallel-8-flushers" the same with 8 pipelines in
// flight instead of defaultFlushers, "batched" 100 messages per call from 64 goroutines.
func BenchmarkPublishReplicated(b *testing.B) {
	master := redistest.Start(b)
	redistest.StartReplica(b, master)
	client := master.Client(b)
	payload := make([]byte, 64)
	runs := []struct {
		name     string
		parallel bool
		perCall  int
		flushers int
	}{{"serial", false, 1, 0}, {"parallel", true, 1, 0}, {"parallel-8-flushers", true, 1, 8}, {"batched", true, 100, 0}}
	for _, run := range runs {
		for _, replicas := range []int{0, 1} {
			b.Run(run.name+"/min-replicas="+strconv.Itoa(replicas), func(b *testing.B) {
				pub := streamqtest.NewPublisher(b, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 8, Trim: streamq.TrimConfig{MaxLen: -1},
					Replication: streamq.ReplicationConfig{MinReplicas: replicas}, Pipeline: streamq.PipelineConfig{Flushers: run.flushers}})
				if err := pub.Publish("bench", message.NewMessage(watermill.NewUUID(), payload)); err != nil {
					b.Fatal(err) // the server check and the topic's registration, outside the timing
				}
				publish := func(msgs []*message.Message) bool {
					for i := range msgs {
						msgs[i] = message.NewMessage(watermill.NewUUID(), payload)
					}
					if err := pub.Publish("bench", msgs...); err != nil {
						b.Error(err)
						return false
					}
					return true
				}
				b.ReportAllocs()
				b.ResetTimer()
				if run.parallel {
					b.SetParallelism(32)
					b.RunParallel(func(pb *testing.PB) {
						msgs := make([]*message.Message, run.perCall)
						for pb.Next() {
							if !publish(msgs) {
								return
							}
						}
					})
				} else {
					msgs := make([]*message.Message, run.perCall)
					for i := 0; i < b.N; i++ {
						if !publish(msgs) {
							break
						}
					}
				}
				b.ReportMetric(float64(b.N*run.perCall)/b.Elapsed().Seconds(), "msg/s")
			})
		}
	}
}
