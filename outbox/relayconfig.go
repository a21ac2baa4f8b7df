package outbox

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
)

// Defaults of RelayConfig. A zero field means its default.
const (
	// DefaultConsumerGroup is the consumer group whose offset marks the rows moved.
	DefaultConsumerGroup = "streamq-outbox"
	// DefaultIdempotencyWindow is how long the relay's streamq Publisher remembers the
	// UUIDs it appended (streamq.PublisherConfig.Idempotency, ByUUID): a row moved again
	// within it (after a relay crash, or a lost reply) is not appended twice. It must cover
	// the longest time a relay may be down, or stalled, between moving a row and storing
	// its offset. Memory: about 120 bytes per message moved within up to 1.5 windows (an
	// hour at 1,000 messages/s is up to about 650 MB over the topic's partitions).
	DefaultIdempotencyWindow = time.Hour
	// DefaultBatchSize is how many rows one read takes, in one database transaction whose
	// offset is stored once they were all moved: the most rows a crash makes the next
	// relay move again.
	DefaultBatchSize = 100
	// DefaultPollInterval is how long the relay waits before reading again after a read
	// found nothing: the latency from commit to stream of an idle outbox is up to this.
	DefaultPollInterval = 100 * time.Millisecond
	// DefaultRetryInterval is how long the relay waits after a database error.
	DefaultRetryInterval = time.Second
	// DefaultResendInterval is how long the relay waits before publishing a message again
	// after streamq refused it (Redis down): the rows behind it wait, in order.
	DefaultResendInterval = time.Second
	// DefaultReportInterval is how often the relay measures its lag into its metrics and
	// reports it into Redis (streamq outbox status).
	DefaultReportInterval = 10 * time.Second
	// DefaultCloseTimeout bounds how long Close waits for the message being moved.
	DefaultCloseTimeout = 10 * time.Second
)

// RelayConfig configures a Relay.
type RelayConfig struct {
	// DB is the database holding the outbox table. Required. Close does not close it.
	DB *sql.DB
	// Dialect is DB's database. Required: MySQL (MariaDB too) or PostgreSQL.
	Dialect Dialect
	// Table is the outbox table the Publishers write. Optional; default DefaultTable.
	Table string
	// ConsumerGroup names the offset (row of TABLE_offsets) of the rows moved. Every relay
	// of one outbox must use the same group: relays of one group share the rows, each moved
	// by one of them; a relay of another group moves every row again. Optional; default
	// DefaultConsumerGroup.
	ConsumerGroup string
	// Name names the outbox in the metrics (label "outbox") and in streamq outbox status.
	// Optional; default Table, or Table:ConsumerGroup when the group is not the default.
	// No braces, spaces or control characters.
	Name string
	// Redis is the client of the streamq topics. Required. Close does not close it.
	Redis redis.UniversalClient
	// Publisher configures the relay's streamq Publisher: prefixes, partition counts,
	// partitioner, retention, as the service's own publishers of these topics would. Client
	// and Idempotency must be left zero (Redis and IdempotencyWindow set them).
	// Optional; default the streamq defaults.
	Publisher streamq.PublisherConfig
	// IdempotencyWindow is the relay Publisher's Idempotency.Window, by UUID
	// (Idempotency.ByUUID): moving a row again, from this relay or another, within it appends
	// nothing, which makes the relay exactly once into the stream. Longer
	// covers longer relay outages and costs Redis memory (see DefaultIdempotencyWindow).
	// Optional; default DefaultIdempotencyWindow; -1 turns it off: a relay crash may then
	// append up to BatchSize messages twice.
	IdempotencyWindow time.Duration
	// BatchSize is how many rows one read takes. Optional; default DefaultBatchSize.
	BatchSize int
	// PollInterval is the wait after a read that found nothing. Optional; default
	// DefaultPollInterval.
	PollInterval time.Duration
	// RetryInterval is the wait after a database error. Optional; default
	// DefaultRetryInterval.
	RetryInterval time.Duration
	// ResendInterval is the wait before publishing again a message streamq refused.
	// Optional; default DefaultResendInterval.
	ResendInterval time.Duration
	// ReportInterval is how often the lag (rows waiting, age of the oldest) is measured
	// into the metrics and reported into Redis with the moved count. Optional; default
	// DefaultReportInterval; -1: neither measured nor reported.
	ReportInterval time.Duration
	// Registerer receives the relay's Prometheus metrics (streamq_outbox_*). Optional;
	// default none: no metrics. Relays of several outboxes may share one Registerer.
	Registerer prom.Registerer
	// RelayID names this relay in streamq outbox status. Optional; default
	// HOST-PID-RANDOM.
	RelayID string
	// CloseTimeout bounds how long Close waits for the message being moved. Optional;
	// default DefaultCloseTimeout.
	CloseTimeout time.Duration
	// Logger receives the relay's logs. Optional; default none.
	Logger watermill.LoggerAdapter
}

func (c *RelayConfig) setDefaults() {
	setDefault(&c.Table, DefaultTable)
	setDefault(&c.ConsumerGroup, DefaultConsumerGroup)
	if c.Name == "" {
		c.Name = c.Table
		if c.ConsumerGroup != DefaultConsumerGroup {
			c.Name += ":" + c.ConsumerGroup
		}
	}
	setDefault(&c.IdempotencyWindow, DefaultIdempotencyWindow)
	setDefault(&c.BatchSize, DefaultBatchSize)
	setDefault(&c.PollInterval, DefaultPollInterval)
	setDefault(&c.RetryInterval, DefaultRetryInterval)
	setDefault(&c.ResendInterval, DefaultResendInterval)
	setDefault(&c.ReportInterval, DefaultReportInterval)
	setDefault(&c.CloseTimeout, DefaultCloseTimeout)
	setDefault(&c.RelayID, defaultRelayID())
	if c.Logger == nil {
		c.Logger = watermill.NopLogger{}
	}
}

// Validate reports whether the config, defaults applied, can build a Relay.
func (c RelayConfig) Validate() error {
	switch {
	case c.DB == nil:
		return fmt.Errorf("%w: DB is required", ErrInvalidConfig)
	case isNil(c.Redis):
		return fmt.Errorf("%w: Redis is required", ErrInvalidConfig)
	case c.Publisher.Client != nil:
		return fmt.Errorf("%w: leave Publisher.Client empty: the relay's publisher uses Redis", ErrInvalidConfig)
	case c.Publisher.Idempotency != (streamq.IdempotencyConfig{}):
		return fmt.Errorf("%w: leave Publisher.Idempotency zero: set IdempotencyWindow", ErrInvalidConfig)
	case c.IdempotencyWindow < -1 || c.ReportInterval < -1:
		return fmt.Errorf("%w: IdempotencyWindow and ReportInterval must be positive, 0 (default) or -1 (off)", ErrInvalidConfig)
	case c.BatchSize < 0 || c.PollInterval < 0 || c.RetryInterval < 0 || c.ResendInterval < 0 || c.CloseTimeout < 0:
		return fmt.Errorf("%w: BatchSize, PollInterval, RetryInterval, ResendInterval and CloseTimeout must not be negative", ErrInvalidConfig)
	}
	if err := c.Dialect.validate(); err != nil {
		return err
	}
	if err := validateTable(c.Table); err != nil {
		return err
	}
	if err := keys.ValidateName("outbox", c.Name); err != nil {
		return fmt.Errorf("%w: Name (set it when Table:ConsumerGroup is not a valid name): %w", ErrInvalidConfig, err)
	}
	return nil
}

// defaultRelayID is HOST-PID-RANDOM.
func defaultRelayID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "relay"
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return host + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b)
}

func setDefault[T comparable](field *T, def T) {
	var zero T
	if *field == zero {
		*field = def
	}
}
