package outbox_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/outbox"
)

// Benchmarks against the local databases and a redis-server of their own:
//
//	cd outbox && go test -run '^$' -bench . -benchtime 20000x   # throughput
//	cd outbox && go test -run '^$' -bench Latency -benchtime 300x
//
// BenchmarkRelayThroughput: b.N rows committed beforehand (transactions of 100), then the
// time for one relay (default config) to move them all into an 8-partition topic: msgs/s.
func BenchmarkRelayThroughput(b *testing.B) {
	for _, db := range dialects {
		b.Run(db.name, func(b *testing.B) {
			e := newEnv(b, db.d)
			const topic = "bench"
			var batch []*message.Message
			for i := range b.N {
				batch = append(batch, keyed("k"+strconv.Itoa(i%64), i))
				if len(batch) == 100 || i == b.N-1 {
					e.publishTx(true, topic, batch...)
					batch = nil
				}
			}
			cfg := e.fastRelay()
			cfg.PollInterval, cfg.ReportInterval = outbox.DefaultPollInterval, -1
			b.ResetTimer()
			start := time.Now()
			e.startRelay(cfg)
			e.waitMoved(topic, b.N, 10*time.Minute)
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
		})
	}
}

// BenchmarkCommitToStreamLatency: one message per transaction on an idle outbox, with the
// default and a short PollInterval: the time from Commit returning to the entry in the
// (1-partition) stream, read with XREAD BLOCK; p50 and p99. Each commit comes at a random
// point of the relay's wait between two reads (5 ms, then up to PollInterval, after the
// previous message arrived), as commits of a service would.
func BenchmarkCommitToStreamLatency(b *testing.B) {
	for _, db := range dialects {
		for _, poll := range []time.Duration{outbox.DefaultPollInterval, 10 * time.Millisecond} {
			b.Run(db.name+"/poll="+poll.String(), func(b *testing.B) {
				e := newEnv(b, db.d)
				cfg := e.fastRelay()
				cfg.PollInterval, cfg.ReportInterval = poll, -1
				cfg.Publisher.DefaultPartitionCount = 1
				e.startRelay(cfg)
				lat := e.commitToStream(b, "latency", b.N, poll)
				b.ReportMetric(float64(percentile(lat, 50).Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(percentile(lat, 99).Microseconds())/1000, "p99-ms")
			})
		}
	}
}

// commitToStream commits n messages one by one, each at a random point of the relay's
// wait after the previous one arrived, and returns the latencies.
func (e *env) commitToStream(b *testing.B, topic string, n int, poll time.Duration) []time.Duration {
	stream := keys.New("", "").PartitionStream(topic, 0)
	last := "0-0"
	lat := make([]time.Duration, 0, n)
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Minute)
	defer cancel()
	b.ResetTimer()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		b.StopTimer()
		time.Sleep(5*time.Millisecond + time.Duration(rng.Int64N(int64(poll))))
		b.StartTimer()
		e.publishTx(true, topic, keyed("k", i))
		committed := time.Now()
		res, err := e.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{stream, last}, Count: 1, Block: time.Minute}).Result()
		require.NoError(b, err)
		lat = append(lat, time.Since(committed))
		last = res[0].Messages[0].ID
	}
	b.StopTimer()
	return lat
}

func percentile(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}
