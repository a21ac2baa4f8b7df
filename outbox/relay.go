package outbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	wsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/components/forwarder"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/outboxstatus"
)

// Relay moves the rows of an outbox table into streamq topics, one message at a time in
// the table's order (the order of the rows' commits on PostgreSQL, of their inserts on
// MySQL), each with the UUID, payload and metadata it was published with.
//
// It is Watermill's forwarder reading the table through a watermill-sql Subscriber, with
// the relay's streamq Publisher as the forwarder's destination. The Subscriber reads up to
// BatchSize rows in one database transaction holding the consumer group's offset row
// locked, and stores the offset once they were all published: several relays of one group
// can run (one moves, the others wait for the lock), and a row is moved again only when a
// relay stopped between publishing it and storing the offset. The streamq Publisher's
// idempotency by UUID (RelayConfig.IdempotencyWindow) then appends nothing the second time: each message is in the stream
// once.
//
// Run and Close are safe for concurrent use.
type Relay struct {
	config  RelayConfig
	sub     *softSubscriber
	fwd     *forwarder.Forwarder
	pub     *streamq.Publisher
	out     *streamOut
	rep     *reporter // nil when ReportInterval is -1
	metrics *metrics

	mu      sync.Mutex
	closed  bool
	running bool
	cancel  context.CancelFunc // stops Run; set while it runs
	wg      sync.WaitGroup     // Run
}

// NewRelay builds a Relay from config. It sends nothing to the database or Redis: Run
// does.
func NewRelay(config RelayConfig) (*Relay, error) {
	config.setDefaults()
	if err := config.Validate(); err != nil {
		return nil, err
	}
	m, err := newMetrics(config.Registerer, config.Name)
	if err != nil {
		return nil, fmt.Errorf("%w: Registerer: %w", ErrInvalidConfig, err)
	}
	pub, err := newStreamPublisher(config, m)
	if err != nil {
		return nil, err
	}
	r := &Relay{config: config, pub: pub, metrics: m, out: &streamOut{pub: pub, metrics: m}}
	if err := r.buildForwarder(); err != nil {
		_ = pub.Close()
		return nil, err
	}
	if config.ReportInterval > 0 {
		r.rep = newReporter(r.reporterDeps())
	}
	return r, nil
}

// newStreamPublisher builds the relay's streamq Publisher: config.Publisher with the relay's
// client and idempotency window, its metrics counting the duplicates dropped.
func newStreamPublisher(config RelayConfig, m *metrics) (*streamq.Publisher, error) {
	pc := config.Publisher
	if pc.Metrics == nil {
		pc.Metrics = streamq.NoopMetrics{}
	}
	pc.Metrics = dupMetrics{MetricsCollector: pc.Metrics, dropped: m.dropped}
	pc.Client = config.Redis
	pc.Idempotency = streamq.IdempotencyConfig{Window: config.IdempotencyWindow, ByUUID: config.IdempotencyWindow > 0}
	pc.Partitioning.PartitionKey = uuidWhenKeyless(pc.Partitioning.PartitionKey)
	pub, err := streamq.NewPublisher(pc, config.Logger)
	if err != nil {
		return nil, fmt.Errorf("%w: Publisher: %w", ErrInvalidConfig, err)
	}
	return pub, nil
}

// uuidWhenKeyless is key (streamq's default when nil), or the message's UUID for a message
// without a key. streamq puts a keyless message in a random partition, and remembers an
// appended UUID per partition: a keyless row moved again after a relay crash could land in
// another partition and be appended twice. Keyed by its UUID it goes to the same partition
// every time; the message's metadata is left as it was.
func uuidWhenKeyless(key func(topic string, msg *message.Message) string) func(string, *message.Message) string {
	if key == nil {
		key = streamq.MetadataPartitionKey
	}
	return func(topic string, msg *message.Message) string {
		if k := key(topic, msg); k != "" {
			return k
		}
		return msg.UUID
	}
}

// buildForwarder builds the watermill-sql Subscriber of the table and the forwarder from it
// to the streamq Publisher.
func (r *Relay) buildForwarder() error {
	c := r.config
	a := newAdapters(c.Dialect, c.Table, c.BatchSize)
	rows, err := wsql.NewSubscriber(wsql.BeginnerFromStdSQL(c.DB), wsql.SubscriberConfig{
		ConsumerGroup:  c.ConsumerGroup,
		PollInterval:   c.PollInterval,
		ResendInterval: c.ResendInterval,
		RetryInterval:  c.RetryInterval,
		SchemaAdapter:  a.schema,
		OffsetsAdapter: a.offsets,
	}, c.Logger)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	sub := &softSubscriber{Subscriber: rows}
	fwd, err := forwarder.NewForwarder(sub, r.out, c.Logger, forwarder.Config{
		ForwarderTopic: c.Table,
		CloseTimeout:   c.CloseTimeout,
	})
	if err != nil {
		_ = sub.Close()
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	r.sub, r.fwd = sub, fwd
	return nil
}

func (r *Relay) reporterDeps() reporterDeps {
	c := r.config
	host, _ := os.Hostname()
	return reporterDeps{db: c.DB, dialect: c.Dialect, table: c.Table, group: c.ConsumerGroup, name: c.Name,
		rdb: c.Redis, controlPrefix: c.Publisher.Keyspace.ControlPrefix, interval: c.ReportInterval,
		relay:   outboxstatus.Relay{ID: c.RelayID, Host: host, PID: os.Getpid(), StartedAt: time.Now()},
		metrics: r.metrics, moved: &r.out.moved, logger: c.Logger}
}

// Run moves rows until ctx is done or Close is called, then returns nil. It returns an
// error at once when the database cannot be reached when it starts, or the tables are
// missing (ErrNoTable); later database and Redis errors are logged and retried
// (RetryInterval, ResendInterval). A Relay runs once: ErrRunning for a second Run,
// ErrClosed after Close.
func (r *Relay) Run(ctx context.Context) error {
	ctx, cancel, err := r.begin(ctx)
	if err != nil {
		return err
	}
	defer r.wg.Done()
	if err := r.prepare(ctx); err != nil {
		stopped := ctx.Err() != nil
		cancel()
		if stopped {
			return nil
		}
		return err
	}
	if r.rep != nil {
		r.rep.start(ctx)
		defer r.rep.wait()
	}
	defer cancel() // before the reporter's wait: the reporter stops with ctx
	err = r.fwd.Run(ctx)
	if ctx.Err() != nil {
		return nil // stopped: a subscribe cut short by the stop is no failure
	}
	return errors.Join(err, r.sub.err)
}

// begin marks the relay running and returns Run's context, which Close cancels.
func (r *Relay) begin(ctx context.Context) (context.Context, context.CancelFunc, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return nil, nil, ErrClosed
	case r.running:
		return nil, nil, ErrRunning
	}
	r.running = true
	ctx, r.cancel = context.WithCancel(ctx)
	r.wg.Add(1)
	return ctx, r.cancel, nil
}

// Close stops Run, waiting up to CloseTimeout for the message being moved (a message whose
// publish was cut short is moved again by the next relay, and appended once), sends the
// last status report and closes the streamq Publisher. It closes neither DB nor Redis.
// Every goroutine of the relay has returned when Close does. Closing twice returns nil.
func (r *Relay) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	if r.cancel != nil {
		r.cancel()
	}
	r.mu.Unlock()
	r.wg.Wait()
	// The forwarder's router is closed: Run returns once it is. A router that never ran is
	// not closed (its Close would wait CloseTimeout for a handler that never started).
	return errors.Join(r.sub.Close(), r.pub.Close())
}

// prepare checks the database and the tables, and runs watermill-sql's queries before a
// subscription (on PostgreSQL, the group's zero offset row that its row lock needs), so
// the subscription the forwarder makes does not fail on them.
func (r *Relay) prepare(ctx context.Context) error {
	c := r.config
	if err := c.DB.PingContext(ctx); err != nil {
		return fmt.Errorf("outbox relay: cannot reach the database: %w", err)
	}
	for _, t := range []string{c.Table, c.Table + offsetsSuffix} {
		if err := probe(ctx, c.DB, "SELECT 1 FROM "+c.Dialect.quote(t)+" WHERE 1 = 0"); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrNoTable, t, err)
		}
	}
	qs, err := newAdapters(c.Dialect, c.Table, c.BatchSize).offsets.BeforeSubscribingQueries(
		wsql.BeforeSubscribingQueriesParams{Topic: c.Table, ConsumerGroup: c.ConsumerGroup})
	for _, q := range qs {
		if err == nil {
			_, err = c.DB.ExecContext(ctx, q.Query, q.Args...)
		}
	}
	if err != nil {
		return fmt.Errorf("outbox relay: offsets of group %q: %w", c.ConsumerGroup, err)
	}
	return nil
}

// probe runs query and reads its result to the end: some drivers report a query's error
// only there.
func probe(ctx context.Context, db Executor, query string) error {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	return errors.Join(rows.Err(), rows.Close())
}
