//go:build soak

package soak

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq"
)

// Publisher processes: lanes goroutines each publish their keys' messages in sequence order,
// one Publish call (of 1 to 3 messages of one key) at a time, paced to the process's rate; a
// call that fails is made again with the same messages until it succeeds.
const (
	lanes          = 8
	keysPerPart    = 2 // keys of one publisher per partition
	publishTimeout = 5 * time.Second
	failPause      = 100 * time.Millisecond
)

// runPublisher is the publisher role; it publishes until SIGTERM.
func runPublisher(env childEnv) int {
	led, err := openLedger(env.ledger, env.name)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer led.close()
	client := newClient(env.addr)
	defer client.Close()
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions},
		newLogger(nil))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	led.write(event{Ev: evStart, Pid: os.Getpid(), Part: -1})
	publishLanes(ctx, pub, led, env)
	if err := pub.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close publisher:", err)
		return 1
	}
	led.write(event{Ev: evEnd, Part: -1})
	return 0
}

func publishLanes(ctx context.Context, pub *streamq.Publisher, led *ledger, env childEnv) {
	tokens := pace(ctx, env.rate)
	keys := spreadKeys(env.name)
	var wg sync.WaitGroup
	for n := 0; n < lanes; n++ {
		var mine []string
		for i := n; i < len(keys); i += lanes {
			mine = append(mine, keys[i])
		}
		rng := rand.New(rand.NewPCG(uint64(env.seed), uint64(hashOf(env.name))+uint64(n)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			(&lane{pub: pub, led: led, rng: rng, keys: mine, seqs: map[string]int64{}}).run(ctx, tokens)
		}()
	}
	wg.Wait()
}

// spreadKeys picks keysPerPart keys of this publisher for every partition, so every
// partition carries traffic.
func spreadKeys(name string) []string {
	per := make([]int, partitions)
	var keys []string
	for i := 0; len(keys) < partitions*keysPerPart; i++ {
		k := fmt.Sprintf("%s-k%d", name, i)
		p := streamq.HashPartitioner{}.Partition(k, partitions)
		if per[p] < keysPerPart {
			per[p]++
			keys = append(keys, k)
		}
	}
	return keys
}

// pace hands out rate tokens per second until ctx is done.
func pace(ctx context.Context, rate int) <-chan struct{} {
	tokens := make(chan struct{}, 64)
	go func() {
		defer close(tokens)
		tick := time.NewTicker(time.Second / time.Duration(max(rate, 1)))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				select {
				case tokens <- struct{}{}:
				default: // the lanes are behind: do not bank the burst
				}
			}
		}
	}()
	return tokens
}

// lane publishes its keys round robin, each key's messages with sequence numbers 1, 2, ...
type lane struct {
	pub  *streamq.Publisher
	led  *ledger
	rng  *rand.Rand
	keys []string
	seqs map[string]int64
}

func (l *lane) run(ctx context.Context, tokens <-chan struct{}) {
	for i := 0; ; i++ {
		key := l.keys[i%len(l.keys)]
		n := 1 + l.rng.IntN(3)
		for j := 0; j < n; j++ {
			if _, ok := <-tokens; !ok {
				return
			}
		}
		if !l.publishUntilDone(ctx, key, l.batch(key, n)) {
			return
		}
	}
}

// batch builds the next n messages of key.
func (l *lane) batch(key string, n int) []*message.Message {
	msgs := make([]*message.Message, n)
	for i := range msgs {
		l.seqs[key]++
		msgs[i] = newMessage(l.rng, key, l.seqs[key])
	}
	return msgs
}

// publishUntilDone sends msgs until a Publish returns nil: a failed Publish (a network
// fault, Redis down or full) is tried again with the same messages, UUIDs included, so the
// idempotent append stores each once. False when ctx ended first.
func (l *lane) publishUntilDone(ctx context.Context, key string, msgs []*message.Message) bool {
	for !l.publish(ctx, key, msgs) {
		if !pause(ctx, failPause) {
			return false
		}
	}
	return true
}

// publish sends msgs of key in one Publish call and records the outcome; false when it
// failed.
func (l *lane) publish(ctx context.Context, key string, msgs []*message.Message) bool {
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
	defer cancel()
	for _, m := range msgs {
		m.SetContext(pctx)
	}
	err := l.pub.Publish(topic, msgs...)
	for _, m := range msgs {
		l.led.write(publishEvent(m, key, err))
	}
	return err == nil
}

func publishEvent(m *message.Message, key string, err error) event {
	e := event{Ev: evPublished, UUID: m.UUID, Key: key, Seq: seqOf(m), Size: len(m.Payload),
		Sum: m.Metadata.Get(mdSum), Part: streamq.HashPartitioner{}.Partition(key, partitions)}
	if err != nil {
		e.Ev, e.Err = evPubFailed, err.Error()
		e.Full, e.BareOOM = refusedFull(err)
	}
	return e
}

// pause waits d; false when ctx ended first.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func hashOf(s string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return h.Sum32()
}
