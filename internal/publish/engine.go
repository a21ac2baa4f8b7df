package publish

import (
	"context"
	"fmt"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/retention"
	"github.com/streamq-dev/streamq/internal/server"
)

// Engine publishes one Publisher's messages: it routes, builds and sends their writes in
// coalesced pipelines, numbers them for idempotency and remembers the numbers of those it did
// not see appended, sends again what a NOSCRIPT refused, turns a refusal at maxmemory into
// Errors.Full, and trims the partitions it appends to in the background.
type Engine struct {
	cfg     Config
	topics  *partition.Cache
	names   *streamNames
	offload payload.Offloader
	batch   *batcher
	resends *resendBook
	scripts scripts
	full    *fullErrors
	trims   *trimmer // nil when Trim.MaxLen is -1
}

// New starts the engine of cfg: its flushers, and its trimmer under length retention. It
// sends nothing to Redis before the first Publish.
func New(cfg Config) *Engine {
	reg := partition.NewRegistry(cfg.Client, cfg.Space)
	e := &Engine{
		cfg:     cfg,
		topics:  partition.NewCache(reg, cfg.DefaultPartitionCount, cfg.RefreshInterval, cfg.Clock.Now),
		names:   &streamNames{space: cfg.Space, group: recordGroupOf(cfg.Client)},
		offload: payload.Offloader{Space: cfg.Space, Threshold: cfg.OffloadThreshold, TTL: cfg.OffloadTTL},
		batch:   newBatcher(cfg),
		resends: newResendBook(cfg.Idempotency.Window, cfg.Clock),
		full: &fullErrors{rdb: cfg.Client, space: cfg.Space, memory: cfg.Memory, refusals: reg, build: cfg.Errors.Full,
			logger: cfg.Logger, clock: cfg.Clock},
	}
	length := retention.Length{MaxLen: cfg.Trim.MaxLen, Exact: cfg.Trim.Exact, Hard: cfg.Trim.Hard}
	e.topics.Settings = length.Settings()
	e.topics.OnRegister = e.registered
	if cfg.Trim.MaxLen > 0 {
		rule := length.Rule()
		rule.GroupExpiry = cfg.Trim.GroupExpiry
		e.trims = newTrimmer(cfg, rule)
	}
	return e
}

// Publish appends msgs to topic in one round trip, each to the partition Route picks, and
// records on each message Redis took where it went (the caller removes a previous Publish's
// results first). The first Publish checks the servers and starts the memory watch; the first
// publish to a topic registers it. It stops waiting when ctx is done (the messages may then
// still be written). It must not run once Close was called.
func (e *Engine) Publish(ctx context.Context, topic string, msgs []*message.Message) error {
	if err := e.cfg.Check.Ensure(ctx, e.cfg.Client, e.cfg.Logger); err != nil {
		return fmt.Errorf("publish to %q: %w", topic, err)
	}
	if e.cfg.Memory != nil {
		e.cfg.Memory.Start() // once: the first Publish starts the watch
	}
	n, err := e.topics.Partitions(ctx, topic)
	if err != nil {
		return fmt.Errorf("publish to %q: %w", topic, err)
	}
	if err := e.resends.settled(ctx, topic, msgs); err != nil { // a send of them still out there
		return fmt.Errorf("publish to %q: %w", topic, err)
	}
	writes, err := e.writes(topic, n, msgs)
	if err != nil {
		return err
	}
	return e.send(ctx, &outgoing{topic: topic, n: n, msgs: msgs, writes: writes})
}

// recordGroupOf is how many partitions share a producer record on rdb's servers: one on a
// Cluster (a record is in its partition's slot), recordGroup otherwise.
func recordGroupOf(rdb redis.UniversalClient) int {
	if server.Clustered(rdb) {
		return 1
	}
	return recordGroup
}

// outgoing is one Publish's writes on their way: msgs[i] is written by writes[i], to topic,
// which has n partitions.
type outgoing struct {
	topic  string
	n      int
	msgs   []*message.Message
	writes []Write
}

func (e *Engine) send(ctx context.Context, o *outgoing) error {
	if err := e.scripts.load(ctx, e.cfg.Client, o.writes, false); err != nil {
		return err // nothing sent, nothing numbered
	}
	var g giveUp // used only when ctx can end (most messages' never does)
	if ctx.Done() != nil {
		g = e.giveUp(o.topic, o.msgs, o.writes)
	}
	res, err := e.batch.submit(ctx, o.writes, g)
	if err != nil {
		return fmt.Errorf("publish to %q: %w", o.topic, err) // g.settle remembers the numbers
	}
	if err := e.outcome(ctx, o, res, g); err != nil {
		e.resends.rememberAll(o.topic, o.msgs, o.writes)
		return err
	}
	e.resends.forgetAll(o.topic, o.msgs, o.writes)
	return nil
}

// giveUp is what a caller that stops waiting for its writes leaves to the resend book.
func (e *Engine) giveUp(topic string, msgs []*message.Message, writes []Write) giveUp {
	return giveUp{
		mark:   func() { e.resends.pend(topic, msgs) },
		unmark: func() { e.resends.unpend(topic, msgs) },
		settle: func() { e.resends.rememberAll(topic, msgs, writes) },
	}
}

// outcome takes a sent pipeline's results: it sends the writes a NOSCRIPT refused again,
// records where each message went and counts the appends; its error is the Publish's.
func (e *Engine) outcome(ctx context.Context, o *outgoing, res flushed, g giveUp) error {
	res, err := e.retryNoScript(ctx, o.writes, res, g)
	if err != nil {
		return fmt.Errorf("publish to %q: %w", o.topic, err)
	}
	recordResults(o.msgs, o.writes, res.results) // also when another write or the WAIT failed
	if err := e.writeFailure(ctx, o, res.results); err != nil {
		return err
	}
	e.produced(o, res.results) // written to the master, even when too few replicas confirmed
	if res.replicated != nil {
		return fmt.Errorf("publish to %q: %w", o.topic, res.replicated)
	}
	return nil
}

// writeFailure is the error of the first write of a pipeline's results that failed.
func (e *Engine) writeFailure(ctx context.Context, o *outgoing, results []Result) error {
	for i, r := range results {
		if err := r.Err(); err != nil {
			server.ReloadOnConnError(ctx, e.cfg.Client, err)
			err = e.full.of(ctx, o.topic, o.writes[i].Partition, err)
			return fmt.Errorf("publish message %s to %q: %w", o.msgs[i].UUID, o.topic, err)
		}
	}
	return nil
}

// produced counts the appends of a successful Publish and lets the trimmer know; a
// duplicate the idempotent append dropped is counted as one.
func (e *Engine) produced(o *outgoing, results []Result) {
	for i, w := range o.writes {
		if results[i].Duplicate() {
			e.cfg.Counters.DuplicateDropped(o.topic, w.Partition)
			continue
		}
		e.cfg.Counters.Produced(o.topic, w.Partition)
		if e.trims != nil && w.Park == nil {
			e.trims.appended(e.names.get(o.topic, w.Partition, o.n), o.topic, w.Partition, 1)
		}
	}
}

// registered runs once the engine registered a topic: it creates the consumer groups
// declared on the topic (by Subscribers that joined before it existed) on every partition
// before the first append, and logs a stated partition count the topic does not have.
func (e *Engine) registered(ctx context.Context, topic string, t partition.Topic) error {
	if stated := e.cfg.DefaultPartitionCount; stated > 0 && stated != t.Count {
		partition.LogCountDiffers(e.cfg.Logger, topic, stated, t.Count)
	}
	return partition.CreateDeclaredGroups(ctx, e.cfg.Client, e.cfg.Space, topic, t)
}

// Close stops the flushers once the writes queued are sent, the trimmer (a trim that runs
// is cancelled) and the memory watch. No Publish may run any more.
func (e *Engine) Close() {
	e.batch.close()
	if e.trims != nil {
		e.trims.close()
	}
	if e.cfg.Memory != nil {
		e.cfg.Memory.Stop()
	}
}
