package outbox

import (
	"context"
	"database/sql"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/outboxstatus"
)

// finalReportTimeout bounds the report a stopping relay sends.
const finalReportTimeout = 2 * time.Second

// reporterDeps are what the reporter needs.
type reporterDeps struct {
	db            *sql.DB
	dialect       Dialect
	table, group  string
	name          string
	rdb           redis.UniversalClient
	controlPrefix string
	relay         outboxstatus.Relay
	interval      time.Duration
	metrics       *metrics
	moved         *atomic.Int64 // streamOut.moved
	logger        watermill.LoggerAdapter
}

// reporter measures the outbox's lag every interval into the metrics and reports it, with
// the messages moved since the last report, into Redis (outboxstatus). It starts with a
// report and ends with one.
type reporter struct {
	reporterDeps
	reported int64 // moved count already reported
	done     chan struct{}
}

func newReporter(d reporterDeps) *reporter { return &reporter{reporterDeps: d} }

// start runs the reporter until ctx is done.
func (r *reporter) start(ctx context.Context) {
	r.done = make(chan struct{})
	go r.run(ctx)
}

// wait returns once the reporter stopped (its ctx is done) and sent its last report.
func (r *reporter) wait() {
	if r.done != nil {
		<-r.done
	}
}

func (r *reporter) run(ctx context.Context) {
	defer close(r.done)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			final, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalReportTimeout)
			r.report(final)
			cancel()
			return
		case <-t.C:
			r.report(ctx)
			t.Reset(r.interval)
		}
	}
}

// report measures the lag and writes one report; failures are logged, and the moved count
// that could not be reported is reported next time.
func (r *reporter) report(ctx context.Context) {
	rep := outboxstatus.Report{Relay: r.relay, Table: r.table, Group: r.group, Dialect: string(r.dialect),
		Interval: r.interval}
	lag, err := ReadLag(ctx, r.db, r.dialect, r.table, r.group)
	if err != nil {
		r.logger.Error("Cannot measure the outbox lag", err, watermill.LogFields{"outbox": r.name})
	} else {
		r.metrics.measured(lag)
		rep.Measured, rep.Pending, rep.OldestAge = true, lag.Pending, lag.OldestAge
	}
	moved := r.moved.Load()
	rep.MovedSinceLastReport = moved - r.reported
	if _, err := outboxstatus.Write(ctx, r.rdb, r.controlPrefix, r.name, rep); err != nil {
		r.logger.Error("Cannot report the outbox status", err, watermill.LogFields{"outbox": r.name})
		return
	}
	r.reported = moved
}
