package admin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/streamq-dev/streamq/internal/outboxstatus"
)

// ErrOutboxNotFound reports an outbox no relay has reported (within a week).
var ErrOutboxNotFound = errors.New("outbox not found")

// OutboxLiveIntervals is how many of its report intervals a relay may stay silent and still
// count as live.
const OutboxLiveIntervals = 3

// OutboxStatus is what the relays of a transactional outbox (the outbox module,
// github.com/streamq-dev/streamq/outbox) last reported into Redis: how far behind its SQL
// table the streamq topics are, and which relays are live. Times are the Redis server's.
type OutboxStatus struct {
	Name, Table, Group, Dialect string
	// Measured: a relay measured the lag; Pending and OldestAge are its latest measurement,
	// taken at MeasuredAt.
	Measured   bool
	Pending    int64         // rows waiting
	OldestAge  time.Duration // age of the oldest waiting row, at MeasuredAt
	MeasuredAt time.Time
	Moved      int64 // messages moved into streamq by every relay (since the status was created)
	ReportedAt time.Time
	// SinceReport is the age of the latest report of any relay.
	SinceReport time.Duration
	// Live: some relay reported within OutboxLiveIntervals of its report interval. When
	// false, nothing is moving the outbox's rows.
	Live   bool
	Relays []OutboxRelay // by ID, live or not (a relay silent for an hour is dropped)
}

// OutboxRelay is one relay of an outbox.
type OutboxRelay struct {
	ID, Host    string
	PID         int
	StartedAt   time.Time
	ReportedAt  time.Time
	SinceReport time.Duration
	Interval    time.Duration // how often it reports
	Moved       int64         // messages it moved since it started
	Live        bool
}

// OutboxStatus returns the status of outbox name (the relay's RelayConfig.Name: its table,
// or table:group), or ErrOutboxNotFound.
func (a *Admin) OutboxStatus(ctx context.Context, name string) (OutboxStatus, error) {
	if _, err := outboxstatus.KeysFor(a.space.Control, name); err != nil {
		return OutboxStatus{}, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	s, found, err := outboxstatus.Read(ctx, a.rdb, a.space.Control, name)
	if err != nil {
		return OutboxStatus{}, err
	}
	if !found {
		return OutboxStatus{}, fmt.Errorf("%w: %q (no relay reported it within %s)", ErrOutboxNotFound, name, outboxstatus.KeyTTL)
	}
	return outboxStatus(s), nil
}

// OutboxStatuses returns the status of every outbox a relay reported within a week, by name.
func (a *Admin) OutboxStatuses(ctx context.Context) ([]OutboxStatus, error) {
	names, err := outboxstatus.Names(ctx, a.rdb, a.space.Control)
	if err != nil {
		return nil, err
	}
	out := []OutboxStatus{}
	for _, name := range names {
		s, err := a.OutboxStatus(ctx, name)
		if errors.Is(err, ErrOutboxNotFound) {
			continue // expired since it was registered
		}
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// outboxStatus derives ages and liveness from a stored status, by the server's clock.
func outboxStatus(s outboxstatus.Status) OutboxStatus {
	o := OutboxStatus{Name: s.Name, Table: s.Table, Group: s.Group, Dialect: s.Dialect,
		Measured: s.Measured, Pending: s.Pending, OldestAge: s.OldestAge, MeasuredAt: s.MeasuredAt,
		Moved: s.Moved, ReportedAt: s.ReportedAt, SinceReport: serverSince(s.Now, s.ReportedAt),
		Relays: make([]OutboxRelay, len(s.Relays))}
	for i, r := range s.Relays {
		rel := OutboxRelay{ID: r.ID, Host: r.Host, PID: r.PID, StartedAt: r.StartedAt, ReportedAt: r.ReportedAt,
			SinceReport: serverSince(s.Now, r.ReportedAt), Interval: r.Interval, Moved: r.Moved}
		rel.Live = rel.SinceReport <= OutboxLiveIntervals*max(r.Interval, time.Second)
		o.Live = o.Live || rel.Live
		o.Relays[i] = rel
	}
	return o
}

// serverSince is now - t, never negative.
func serverSince(now, t time.Time) time.Duration { return max(now.Sub(t), 0) }
