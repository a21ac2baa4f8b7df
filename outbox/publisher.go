package outbox

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/ThreeDotsLabs/watermill"
	wsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/components/forwarder"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/keys"
)

// Config configures a Publisher.
type Config struct {
	// Dialect is the database of the transaction. Required: MySQL (MariaDB too) or
	// PostgreSQL.
	Dialect Dialect
	// Table is the outbox table, created beforehand by the migration (MigrationSQL).
	// Optional; default DefaultTable. The relay must name the same table.
	Table string
	// Logger receives watermill-sql's trace lines (the INSERT and its arguments). Optional;
	// default none.
	Logger watermill.LoggerAdapter
}

func (c *Config) setDefaults() {
	if c.Table == "" {
		c.Table = DefaultTable
	}
	if c.Logger == nil {
		c.Logger = watermill.NopLogger{}
	}
}

// Validate reports whether the config, defaults applied, can build a Publisher.
func (c Config) Validate() error {
	if err := c.Dialect.validate(); err != nil {
		return err
	}
	return validateTable(c.Table)
}

// Publisher is a Watermill message.Publisher that writes messages into the outbox table
// through one transaction (or connection) of the caller, instead of into streamq: each
// message becomes one row holding Watermill's forwarder envelope (destination topic, the
// message's UUID, payload and metadata). The rows become visible, and the Relay moves them
// into streamq, if and only if the transaction commits.
//
// A Publisher is as short-lived as its transaction: make one per transaction, publish, and
// commit or roll back. It is not safe for concurrent use, as the transaction it writes
// through is not. Publish runs the INSERT with the context of the first message
// (msg.SetContext), context.Background() when none was set.
type Publisher struct {
	out    *forwarder.Publisher
	closed atomic.Bool
}

var _ message.Publisher = (*Publisher)(nil)

// NewPublisher returns a Publisher writing through tx, usually the *sql.Tx of the business
// write. It sends nothing to the database.
func NewPublisher(tx Executor, config Config) (*Publisher, error) {
	if isNil(tx) {
		return nil, fmt.Errorf("%w: tx is nil", ErrInvalidConfig)
	}
	return NewPublisherWith(stdExecutor{tx}, config)
}

// NewPublisherWith is NewPublisher for anything implementing watermill-sql's
// ContextExecutor, such as a pgx transaction through wsql.TxFromPgx.
func NewPublisherWith(exec wsql.ContextExecutor, config Config) (*Publisher, error) {
	if isNil(exec) {
		return nil, fmt.Errorf("%w: tx is nil", ErrInvalidConfig)
	}
	config.setDefaults()
	if err := config.Validate(); err != nil {
		return nil, err
	}
	rows, err := wsql.NewPublisher(exec, wsql.PublisherConfig{
		SchemaAdapter: newAdapters(config.Dialect, config.Table, 0).schema,
	}, config.Logger)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	out := forwarder.NewPublisher(rows, forwarder.PublisherConfig{ForwarderTopic: config.Table})
	return &Publisher{out: out}, nil
}

// Publish stores msgs, for the streamq topic, in the outbox table through the transaction,
// in their order. The messages keep their UUID (streamq's idempotency key) and metadata
// (streamq.PartitionKeyMetadata chooses their partition). A topic streamq would refuse is
// refused here, before anything is written: the relay could never move it.
func (p *Publisher) Publish(topic string, msgs ...*message.Message) error {
	if p.closed.Load() {
		return ErrClosed
	}
	if err := keys.ValidateName("topic", topic); err != nil {
		return fmt.Errorf("outbox publish: %w", err)
	}
	if len(msgs) == 0 {
		return nil
	}
	if slices.Contains(msgs, nil) {
		return fmt.Errorf("outbox publish to %q: nil message", topic)
	}
	if err := p.out.Publish(topic, msgs...); err != nil {
		return fmt.Errorf("outbox publish to %q: %w", topic, err)
	}
	return nil
}

// Close makes further Publish calls fail with ErrClosed. It neither commits nor rolls back
// the transaction. Closing twice returns nil.
func (p *Publisher) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	return p.out.Close()
}
