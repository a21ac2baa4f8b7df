package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/outbox"
)

// relayOpts are the flags of "relay".
type relayOpts struct {
	db             dbFlags
	redis          redisFlags
	window         string
	name, relayID  string
	batch          int
	partitions     int
	poll, report   time.Duration
	metricsAddr    string
	verbose, debug bool
}

const relayExample = `  export OUTBOX_DSN='app:secret@tcp(db:3306)/app' REDIS_URL=redis://redis:6379
  streamq-outbox relay --db-driver mysql --metrics-addr :9464
  streamq-outbox relay --db-driver postgres --db-dsn postgres://app@db/app --table orders_outbox --window 6h`

func relayCmd(stdout io.Writer) *cobra.Command {
	o := &relayOpts{}
	cmd := &cobra.Command{
		Use:   "relay",
		Short: "Move the outbox's rows into streamq topics until stopped",
		Long: `Moves the rows of the outbox table into their streamq topics, in order, until SIGINT or
SIGTERM. Several relays of one table and consumer group may run: each row is moved by one
of them (the others wait on the group's offset row lock), so a second relay is a hot
standby. A row moved again after a relay crash is not appended twice as long as the relay
is back within --window (streamq's idempotency window).`,
		Example: relayExample,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), stdout) },
	}
	o.db.add(cmd)
	o.redis.add(cmd, "Redis URL of the streamq topics (default $REDIS_URL, else "+defaultRedisURL+")")
	fs := cmd.Flags()
	fs.StringVar(&o.window, "window", "1h", "streamq idempotency window of the relay's publisher: must cover the longest\n"+
		"relay outage you expect (longer costs Redis memory); off: at least once")
	fs.StringVar(&o.name, "name", "", "name of the outbox in metrics and streamq outbox status (default TABLE, or TABLE:GROUP)")
	fs.StringVar(&o.relayID, "relay-id", "", "name of this relay in streamq outbox status (default HOST-PID-RANDOM)")
	fs.IntVar(&o.batch, "batch-size", outbox.DefaultBatchSize, "rows read per database transaction")
	fs.IntVar(&o.partitions, "partitions", 0, "partition count of the topics this relay creates (default: streamq's, 1)")
	fs.DurationVar(&o.poll, "poll-interval", outbox.DefaultPollInterval, "wait after a read that found nothing")
	fs.DurationVar(&o.report, "report-interval", outbox.DefaultReportInterval, "how often the lag is measured and reported")
	fs.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on this address (/metrics), e.g. :9464")
	fs.BoolVarP(&o.verbose, "verbose", "v", false, "log the relay's info lines")
	fs.BoolVar(&o.debug, "debug", false, "log debug lines too")
	return cmd
}

// run runs the relay until ctx is done.
func (o *relayOpts) run(ctx context.Context, stdout io.Writer) error {
	window, err := parseWindow(o.window)
	if err != nil {
		return err
	}
	db, dialect, err := o.db.open(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	rdb, err := dialRedis(ctx, o.redis.resolved(defaultRedisURL))
	if err != nil {
		return err
	}
	defer func() { _ = rdb.Close() }()
	reg := prom.NewRegistry()
	relay, err := outbox.NewRelay(outbox.RelayConfig{
		DB: db, Dialect: dialect, Table: o.db.table, ConsumerGroup: o.db.group, Name: o.name,
		Redis: rdb, IdempotencyWindow: window, BatchSize: o.batch, PollInterval: o.poll,
		ReportInterval: o.report, RelayID: o.relayID, Registerer: reg,
		Publisher: streamq.PublisherConfig{Keyspace: streamq.Keyspace{StreamPrefix: o.redis.streamPrefix, ControlPrefix: o.redis.controlPrefix},
			DefaultPartitionCount: o.partitions},
		Logger: o.logger(stdout),
	})
	if err != nil {
		return &usageError{err: err}
	}
	defer func() { _ = relay.Close() }() // after Run returned: nothing left to fail
	stopMetrics, err := serveMetrics(o.metricsAddr, reg)
	if err != nil {
		return err
	}
	defer stopMetrics()
	printf(stdout, "relaying outbox table %s (group %s) into streamq; Ctrl-C stops\n", o.db.table, o.db.group)
	return relay.Run(ctx)
}

// logger logs errors, and info lines with -v, debug lines with --debug.
func (o *relayOpts) logger(w io.Writer) watermill.LoggerAdapter {
	level := slog.LevelWarn
	switch {
	case o.debug:
		level = slog.LevelDebug
	case o.verbose:
		level = slog.LevelInfo
	}
	return watermill.NewSlogLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})))
}

// serveMetrics serves reg on addr/metrics ("" serves nothing); the returned func stops it.
func serveMetrics(addr string, reg *prom.Registry) (func(), error) {
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln) // ErrServerClosed after Shutdown; a failed listener stops the metrics only
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, nil
}
