package outboxstatus

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/streamq-dev/streamq/internal/script"
)

//go:embed lua/report.lua
var reportSrc string

var reportScript = script.New(reportSrc)

// Relay names one relay process.
type Relay struct {
	ID        string
	Host      string
	PID       int
	StartedAt time.Time
}

// Report is one periodic report of a relay.
type Report struct {
	Relay                 Relay
	Table, Group, Dialect string
	Interval              time.Duration // how often the relay reports
	Measured              bool          // false: the relay could not read its lag this time
	Pending               int64         // rows waiting (when Measured)
	OldestAge             time.Duration // age of the oldest waiting row (when Measured)
	MovedSinceLastReport  int64
}

// Write stores r as the latest report of outbox name and registers the name. It returns the
// server time the report was stored at.
func Write(ctx context.Context, rdb redis.UniversalClient, controlPrefix, name string, r Report) (time.Time, error) {
	k, err := KeysFor(controlPrefix, name)
	if err != nil {
		return time.Time{}, err
	}
	pending, oldest := "", ""
	if r.Measured {
		pending, oldest = strconv.FormatInt(r.Pending, 10), ms(r.OldestAge)
	}
	at, err := reportScript.Run(ctx, rdb, []string{k.Status, k.Relays},
		r.Relay.ID, r.Relay.Host, r.Relay.PID, r.Relay.StartedAt.UnixMilli(),
		pending, oldest, r.MovedSinceLastReport, r.Table, r.Group, r.Dialect,
		ms(r.Interval), ms(ForgetRelay), ms(KeyTTL)).Int64()
	if err != nil {
		return time.Time{}, fmt.Errorf("report outbox %q: %w", name, err)
	}
	if err := rdb.SAdd(ctx, k.Registry, name).Err(); err != nil {
		return time.Time{}, fmt.Errorf("register outbox %q: %w", name, err)
	}
	return time.UnixMilli(at), nil
}
