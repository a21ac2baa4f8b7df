package publish

import (
	"context"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/retention"
)

// trimTimeout bounds one background trim.
const trimTimeout = 10 * time.Second

// trimmer applies the engine's length retention in the background, so that the publish path
// sends nothing but the appends: every so many appends to a partition (a hundredth of
// MaxLen, at most 1000) it runs one trim of that partition, which removes only entries every
// registered group has been delivered and acked (or, under TrimHard, counts what it removes
// before a group acked it). At most one trim per partition is queued or running.
type trimmer struct {
	rdb      redis.UniversalClient
	space    keys.Space
	rule     retention.Rule
	every    int64
	logger   watermill.LoggerAdapter
	counters Counters
	clock    clock.Clock

	queue   chan trimTarget
	pending sync.Map // trimTarget -> struct{}: queued, not started
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
}

type trimTarget struct {
	topic     string
	partition int
}

// trimEvery is how many appends to a partition trigger one trim of it.
func trimEvery(maxLen int64) int64 { return min(max(maxLen/100, 1), 1000) }

// newTrimmer starts the trims of rule on the partitions cfg's engine appends to; close
// stops them.
func newTrimmer(cfg Config, rule retention.Rule) *trimmer {
	ctx, cancel := context.WithCancel(context.Background())
	t := &trimmer{rdb: cfg.Client, space: cfg.Space, rule: rule, every: trimEvery(rule.MaxLen), logger: cfg.Logger,
		counters: cfg.Counters, clock: cfg.Clock, queue: make(chan trimTarget, 1024), ctx: ctx, cancel: cancel,
		done: make(chan struct{})}
	go t.loop()
	return t
}

// appended counts n appends to a partition and asks for a trim when they cross a multiple of
// every. Cheap: one atomic add on the publish path.
func (t *trimmer) appended(slot *partitionSlot, topic string, p int, n int64) {
	total := slot.appended.Add(n)
	if total/t.every == (total-n)/t.every {
		return
	}
	k := trimTarget{topic, p}
	if _, queued := t.pending.LoadOrStore(k, struct{}{}); queued {
		return
	}
	select {
	case t.queue <- k:
	default: // full: the next multiple asks again
		t.pending.Delete(k)
	}
}

func (t *trimmer) loop() {
	defer close(t.done)
	for {
		select {
		case k := <-t.queue:
			t.pending.Delete(k) // appends from now on may queue the next trim
			t.trim(k)
		case <-t.ctx.Done():
			return
		}
	}
}

func (t *trimmer) trim(k trimTarget) {
	ctx, cancel := context.WithTimeout(t.ctx, trimTimeout)
	defer cancel()
	stream, loss := t.space.PartitionStream(k.topic, k.partition), t.space.TrimLoss(k.topic, k.partition)
	rule := t.rule
	rule.Now = t.clock.Now()
	res, err := retention.Trim(ctx, t.rdb, stream, loss, rule)
	fields := watermill.LogFields{"topic": k.topic, "partition": k.partition}
	if err != nil {
		if ctx.Err() == nil {
			t.logger.Error("Retention trim failed", err, fields.Add(watermill.LogFields{"rule": "length"}))
		}
		return
	}
	retention.Report(t.logger, partitionCounters{t.counters, k.topic, k.partition}, fields, "length", res)
}

// close stops the trimmer; a trim that is running is cancelled.
func (t *trimmer) close() {
	t.cancel()
	<-t.done
}
