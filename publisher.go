package streamq

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/components/delay"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/health"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/publish"
	"github.com/streamq-dev/streamq/internal/retention"
	"github.com/streamq-dev/streamq/internal/retry"
	"github.com/streamq-dev/streamq/internal/script"
	"github.com/streamq-dev/streamq/internal/server"
)

// ForcePartitionMetadata forces a message onto a partition (decimal index). An index outside
// the topic's partitions is an ErrPartitionOutOfRange, never a silent modulo.
const ForcePartitionMetadata = codec.HeaderForcePartition

var streamIDPattern = regexp.MustCompile(`^\d+-\d+$`)

// Publisher publishes messages to partitioned topics. It implements message.Publisher.
type Publisher struct {
	config PublisherConfig
	logger watermill.LoggerAdapter
	space  keys.Space
	topics *partition.Cache
	names  *streamNames
	batch  *batcher
	trims  *trimmer      // nil when MaxLen is off
	server *health.Check // shared by every user of the client
	memory *health.Watch // nil when Memory.Interval is -1
	full   fullErrors
	// refusals writes a topic's refusal record when Redis refuses a publish for memory.
	refusals *partition.Registry
	// resends keeps the numbers of messages not seen appended, for their next Publish.
	resends *resendBook
	// offloader builds the appends of payloads over Payloads.Threshold.
	offloader payload.Offloader

	// Scripts used by SHA inside pipelines are loaded once; NOSCRIPT reloads them.
	parkLoaded, appendLoaded atomic.Bool

	mu     sync.RWMutex
	closed bool
}

var _ message.Publisher = (*Publisher)(nil)

// NewPublisher validates config and returns a Publisher. logger may be nil. It sends nothing
// to Redis: the first Publish checks the servers behind the client (see MinRedisVersion).
func NewPublisher(config PublisherConfig, logger watermill.LoggerAdapter) (*Publisher, error) {
	config.setDefaults()
	if err := config.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = watermill.NopLogger{}
	}
	space := keys.New(config.Keyspace.StreamPrefix, config.Keyspace.ControlPrefix)
	reg := partition.NewRegistry(config.Client, space)
	p := &Publisher{
		refusals:  reg,
		config:    config,
		logger:    logger,
		space:     space,
		topics:    partition.NewCache(reg, config.DefaultPartitionCount, config.Partitioning.RefreshInterval, nil),
		names:     &streamNames{space: space},
		batch:     newBatcher(config.Client, config.Pipeline, config.Replication),
		server:    health.CheckOf(config.Client),
		resends:   newResendBook(config.Idempotency.Window, clock.Real()),
		offloader: payload.Offloader{Space: space, Threshold: config.Payloads.Threshold, TTL: config.Payloads.TTL},
	}
	p.memory = newMemoryWatch(config.Client, config.Memory, logger, config.Metrics)
	length := retention.Length{MaxLen: config.Trim.MaxLen, Exact: config.Trim.Exact, Hard: config.Trim.Policy == TrimHard}
	p.topics.Settings = length.Settings()
	p.topics.OnRegister = p.registered
	if config.Trim.MaxLen > 0 {
		rule := length.Rule()
		rule.GroupExpiry = groupExpiryOf(config.Trim.GroupExpiry)
		p.trims = newTrimmer(config.Client, space, rule, logger, config.Metrics)
	}
	return p, nil
}

// Publish appends msgs to topic in one round trip, each to the partition its key maps to.
// Concurrent calls share round trips: their writes are coalesced into one pipeline. The first
// publish to a topic registers it; the first publish on a client checks its servers (an
// ErrUnsupportedServer for one older than MinRedisVersion). It returns when Redis has
// confirmed every message, or the first error; under MinReplicas, when that many replicas
// confirmed them, or an error wrapping ErrNotReplicated. It stops waiting when any message's
// context is done (the messages may then still be written). A closed client gives an error
// wrapping ErrInvalidConfig and redis.ErrClosed. Publish is safe for concurrent use.
//
// Each message Redis took gets its partition and stream id in its metadata, read with
// PublishedPartition and PublishedStreamID: set also when Publish returns an error for
// another message or for the replicas (ErrNotReplicated: the entries are on the master).
func (p *Publisher) Publish(topic string, msgs ...*message.Message) error {
	if p.config.Tracer != nil {
		return p.tracedPublish(topic, msgs)
	}
	return apiError(p.publish(topic, msgs))
}

func (p *Publisher) publish(topic string, msgs []*message.Message) error {
	clearPublished(msgs) // a previous Publish's results are not written into the entries
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return ErrPublisherClosed
	}
	if err := validateTopic(topic); err != nil {
		return err
	}
	if len(msgs) == 0 {
		return nil
	}
	ctx, cancel := mergeContexts(msgs)
	defer cancel()
	if err := p.server.Ensure(ctx, p.config.Client, p.logger); err != nil {
		return fmt.Errorf("publish to %q: %w", topic, err)
	}
	if p.memory != nil {
		p.memory.Start() // once: the first Publish starts the watch
	}
	n, err := p.topics.Partitions(ctx, topic)
	if err != nil {
		return fmt.Errorf("publish to %q: %w", topic, err)
	}
	if err := p.resends.settled(ctx, topic, msgs); err != nil { // a send of them still out there
		return fmt.Errorf("publish to %q: %w", topic, err)
	}
	writes, err := p.appendArgs(topic, n, msgs)
	if err != nil {
		return err
	}
	return p.send(ctx, topic, n, writes, msgs)
}

func (p *Publisher) appendArgs(topic string, n int, msgs []*message.Message) ([]publish.Write, error) {
	writes := make([]publish.Write, len(msgs))
	for i, msg := range msgs {
		part, err := p.route(topic, n, msg)
		if err != nil {
			return nil, err
		}
		writes[i].Partition = part
		slot := p.names.get(topic, part, n)
		p.idempotence(topic, slot, msg, &writes[i])
		due, delayed := delayedUntil(msg)
		if !delayed && p.offloads(msg) {
			if writes[i].Offload, err = p.offloadArgs(topic, part, msg); err != nil {
				return nil, err
			}
			continue
		}
		if delayed {
			if writes[i].Park, err = p.parkArgs(topic, part, due, msg); err != nil {
				return nil, err
			}
			continue
		}
		if writes[i].XAdd, err = p.xaddCommand(topic, slot.stream, msg); err != nil {
			return nil, fmt.Errorf("marshal message %s: %w", msg.UUID, err)
		}
	}
	return writes, nil
}

// idempotence makes w's append idempotent: by producer and sequence number (numbered by
// the flusher that sends it, or as when the same message was sent before and not seen
// appended), or by its UUID under Idempotency.ByUUID and for a message whose UUID was
// derived from a consumed one (DeriveUUID).
func (p *Publisher) idempotence(topic string, slot *partitionSlot, msg *message.Message, w *publish.Write) {
	idem := p.config.Idempotency
	switch {
	case !idem.on():
	case idem.ByUUID, msg.Metadata.Get(codec.HeaderDerivedFrom) != "": // a derived UUID: its send from another run is found by UUID
		w.Once = &publish.Once{Prefix: slot.idem, Index: slot.index, UUID: msg.UUID, Window: idem.Window}
	default:
		w.Seq = &publish.Sequenced{Prefix: slot.producers, Index: slot.index, Window: idem.Window}
		p.resends.number(topic, msg.UUID, w)
	}
}

func (p *Publisher) offloads(msg *message.Message) bool {
	return p.offloader.Offloads(len(msg.Payload))
}

// offloadArgs stores the payload under its own key and the entry without it, pointing there.
func (p *Publisher) offloadArgs(topic string, part int, msg *message.Message) (*payload.Offload, error) {
	light := msg.Copy()
	light.Payload = nil
	values, err := p.config.Marshaler.Marshal(topic, light)
	if err != nil {
		return nil, fmt.Errorf("marshal message %s: %w", msg.UUID, err)
	}
	return p.offloader.Offload(topic, part, msg.Payload, values), nil
}

func (p *Publisher) parkArgs(topic string, part int, due time.Time, msg *message.Message) (*retry.Park, error) {
	values, err := p.config.Marshaler.Marshal(topic, msg)
	if err != nil {
		return nil, fmt.Errorf("marshal message %s: %w", msg.UUID, err)
	}
	item, err := retry.NewItem(retry.Origin{Topic: topic, Partition: part, MaxRetries: -1}, values)
	if err != nil {
		return nil, fmt.Errorf("delay message %s: %w", msg.UUID, err)
	}
	return &retry.Park{ZSet: p.space.Delay(topic, part), Items: p.space.DelayItems(topic, part),
		ID: retry.NewItemID(), Due: due, Item: item}, nil
}

// delayedUntil reads Watermill's delay metadata (components/delay): the message is parked
// when it is due later than now. components/delay writes "until" in whole seconds, so the
// later of "until" and now + "for" is used: never early.
func delayedUntil(msg *message.Message) (time.Time, bool) {
	var due time.Time
	if v := msg.Metadata.Get(delay.DelayedUntilKey); v != "" {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			due = t
		}
	}
	if v := msg.Metadata.Get(delay.DelayedForKey); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			if t := time.Now().Add(d); t.After(due) {
				due = t
			}
		}
	}
	return due, !due.IsZero() && time.Until(due) > retry.DirectThreshold
}

// route picks the partition: x-force-partition-id when set, else the partitioner, given the
// message's key, or under idempotent publish its UUID when it has none.
func (p *Publisher) route(topic string, n int, msg *message.Message) (int, error) {
	if forced := msg.Metadata.Get(ForcePartitionMetadata); forced != "" {
		part, err := strconv.Atoi(forced)
		if err != nil {
			part = -1
		}
		if part < 0 || part >= n {
			return 0, &PartitionError{Topic: topic, Partition: part, Err: fmt.Errorf(
				"%w: %s=%q, topic has %d partitions", ErrPartitionOutOfRange, ForcePartitionMetadata, forced, n)}
		}
		return part, nil
	}
	key := p.config.Partitioning.PartitionKey(topic, msg)
	if key == "" && p.config.Idempotency.on() {
		key = msg.UUID // a message sent again goes where it went: duplicates are found per partition
	}
	part := p.config.Partitioning.Partitioner.Partition(key, n)
	if part < 0 || part >= n {
		return 0, &PartitionError{Topic: topic, Partition: part, Err: fmt.Errorf(
			"%w: partitioner returned %d for %d partitions", ErrPartitionOutOfRange, part, n)}
	}
	return part, nil
}

func (p *Publisher) send(ctx context.Context, topic string, n int, writes []publish.Write, msgs []*message.Message) error {
	if err := p.loadScripts(ctx, writes, false); err != nil {
		return err // nothing sent, nothing numbered
	}
	var g giveUp // used only when ctx can end (most messages' never does)
	if ctx.Done() != nil {
		g = giveUp{
			mark:   func() { p.resends.pend(topic, msgs) },
			unmark: func() { p.resends.unpend(topic, msgs) },
			settle: func() { p.rememberAll(topic, msgs, writes) },
		}
	}
	res, err := p.batch.submit(ctx, writes, g)
	if err != nil {
		return fmt.Errorf("publish to %q: %w", topic, err) // g.settle remembers the numbers
	}
	if err := p.outcome(ctx, topic, n, writes, msgs, res, g); err != nil {
		p.rememberAll(topic, msgs, writes)
		return err
	}
	p.forgetAll(topic, msgs, writes)
	return nil
}

// outcome takes a sent pipeline's results: it sends the writes a NOSCRIPT refused again,
// records where each message went and counts the appends; its error is the Publish's.
func (p *Publisher) outcome(ctx context.Context, topic string, n int, writes []publish.Write, msgs []*message.Message,
	res flushed, g giveUp) error {
	res, err := p.retryNoScript(ctx, writes, res, g)
	if err != nil {
		return fmt.Errorf("publish to %q: %w", topic, err)
	}
	recordPublished(msgs, writes, res.results) // also when another write or the WAIT failed
	if err := p.writeFailure(ctx, topic, writes, msgs, res.results); err != nil {
		return err
	}
	p.produced(topic, n, writes, res.results) // written to the master, even when too few replicas confirmed
	if res.replicated != nil {
		return fmt.Errorf("publish to %q: %w", topic, res.replicated)
	}
	return nil
}

// writeFailure is the error of the first write of a pipeline's results that failed.
func (p *Publisher) writeFailure(ctx context.Context, topic string, writes []publish.Write, msgs []*message.Message, results []publish.Result) error {
	for i, r := range results {
		if err := r.Err(); err != nil {
			server.ReloadOnConnError(ctx, p.config.Client, err)
			err = p.full.of(ctx, p, topic, writes[i].Partition, err)
			return fmt.Errorf("publish message %s to %q: %w", msgs[i].UUID, topic, err)
		}
	}
	return nil
}

// rememberAll keeps the numbers of every sequenced write of a Publish that failed, or whose
// caller stopped waiting: the caller sends them again, and each keeps its number, so the
// append drops those that were appended (on a cluster some nodes may have appended theirs).
func (p *Publisher) rememberAll(topic string, msgs []*message.Message, writes []publish.Write) {
	for i, w := range writes {
		p.resends.remember(topic, msgs[i].UUID, w)
	}
}

// forgetAll forgets the numbers of a Publish that succeeded.
func (p *Publisher) forgetAll(topic string, msgs []*message.Message, writes []publish.Write) {
	for i, w := range writes {
		if w.Seq != nil {
			p.resends.forget(topic, msgs[i].UUID)
		}
	}
}

// produced counts the appends of a successful Publish and lets the trimmer know; a
// duplicate the idempotent append dropped is counted as one (DuplicateReporter).
func (p *Publisher) produced(topic string, n int, writes []publish.Write, results []publish.Result) {
	dups, _ := p.config.Metrics.(DuplicateReporter)
	for i, w := range writes {
		if results[i].Duplicate() {
			if dups != nil {
				dups.DuplicateDropped(topic, w.Partition)
			}
			continue
		}
		p.config.Metrics.Produced(topic, w.Partition)
		if p.trims != nil && w.Park == nil {
			p.trims.appended(p.names.get(topic, w.Partition, n), topic, w.Partition, 1)
		}
	}
}

// registered runs once the Publisher registered a topic: it creates the consumer groups
// declared on the topic (by Subscribers that joined before it existed) on every partition
// before the first append, and logs a stated partition count the topic does not have.
func (p *Publisher) registered(ctx context.Context, topic string, t partition.Topic) error {
	if stated := p.config.DefaultPartitionCount; stated > 0 && stated != t.Count {
		partition.LogCountDiffers(p.logger, topic, stated, t.Count)
	}
	return partition.CreateDeclaredGroups(ctx, p.config.Client, p.space, topic, t)
}

// retryNoScript sends again, once, the script writes a server refused with NOSCRIPT (a
// restarted or failed-over node has an empty script cache), after loading the scripts there.
// Plain appends that succeeded are not sent again. Under MinReplicas the first pipeline's
// verdict stands when it failed: its WAIT covered the writes that are not sent again.
func (p *Publisher) retryNoScript(ctx context.Context, writes []publish.Write, res flushed, g giveUp) (flushed, error) {
	var idx []int
	for i, r := range res.results {
		if script.IsNoScript(r.Err()) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return res, nil
	}
	again := make([]publish.Write, len(idx))
	for j, i := range idx {
		again[j] = writes[i]
	}
	if err := p.loadScripts(ctx, again, true); err != nil {
		return flushed{}, err
	}
	second, err := p.batch.submit(ctx, again, g)
	if err != nil {
		return flushed{}, err
	}
	for j, i := range idx {
		res.results[i] = second.results[j]
	}
	if res.replicated == nil {
		res.replicated = second.replicated
	}
	return res, nil
}

// loadScripts caches the scripts a pipeline sends by SHA on the server before it is sent:
// the delay script for batches that park a delayed message, the idempotent append for
// batches that append idempotently (Idempotency). The offload script needs no load: it is sent
// as EVAL with its text (see internal/script).
func (p *Publisher) loadScripts(ctx context.Context, writes []publish.Write, force bool) error {
	var park, once bool
	for _, w := range writes {
		park = park || w.Park != nil
		once = once || ((w.Once != nil || w.Seq != nil) && w.Park == nil)
	}
	if err := loadOnce(park, force, &p.parkLoaded, func() error { return retry.LoadScripts(ctx, p.config.Client) }); err != nil {
		return err
	}
	return loadOnce(once, force, &p.appendLoaded, func() error { return publish.LoadScripts(ctx, p.config.Client) })
}

// loadOnce runs load when needed and not done before (or force), and remembers it in done.
func loadOnce(needed, force bool, done *atomic.Bool, load func() error) error {
	if !needed || (!force && done.Load()) {
		return nil
	}
	if err := load(); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	done.Store(true)
	return nil
}

// Close stops the publisher: later Publish calls return ErrPublisherClosed. It waits for
// running Publish calls, does not close the Redis client and is idempotent.
func (p *Publisher) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	p.batch.close()
	if p.trims != nil {
		p.trims.close()
	}
	if p.memory != nil {
		p.memory.Stop()
	}
	return nil
}

// mergeContexts returns a context done when any message's context is done.
func mergeContexts(msgs []*message.Message) (context.Context, context.CancelFunc) {
	first := msgs[0].Context()
	distinct := []context.Context{}
	for _, m := range msgs[1:] {
		if c := m.Context(); c != first && c.Done() != nil {
			distinct = append(distinct, c)
		}
	}
	if len(distinct) == 0 {
		return first, func() {}
	}
	ctx, cancel := context.WithCancel(first)
	stops := make([]func() bool, len(distinct))
	for i, c := range distinct {
		stops[i] = context.AfterFunc(c, cancel)
	}
	return ctx, func() {
		for _, s := range stops {
			s()
		}
		cancel()
	}
}
