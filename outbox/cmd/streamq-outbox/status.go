package main

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/streamq-dev/streamq"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/outbox"
)

// statusOpts are the flags of "status".
type statusOpts struct {
	db    dbFlags
	redis redisFlags
	name  string
	json  bool
}

// statusView is "status --json".
type statusView struct {
	Table       string `json:"table"`
	Group       string `json:"group"`
	Pending     int64  `json:"pending"`
	OldestAgeMs int64  `json:"oldestAgeMs"`
	// Relays is what the relays reported into Redis; null when Redis has no report or
	// could not be reached (RedisError says why).
	Relays     *relaysView `json:"relays"`
	RedisError string      `json:"redisError,omitempty"`
}

// relaysView is the Redis side of "status --json".
type relaysView struct {
	Name          string `json:"name"`
	Moved         int64  `json:"moved"`
	SinceReportMs int64  `json:"sinceReportMs"`
	Live          int    `json:"live"`
	Total         int    `json:"total"`
}

func statusCmd(stdout io.Writer) *cobra.Command {
	o := &statusOpts{}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Rows waiting in the outbox and the age of the oldest, from the database",
		Long: `Counts, in the database, the rows of the outbox table the consumer group has not moved
yet and the age of the oldest, then adds what the relays reported into Redis (moved total,
live relays), when Redis can be reached. "streamq outbox status" shows the Redis side alone.`,
		Example: `  streamq-outbox status --db-driver mysql --db-dsn 'root@tcp(127.0.0.1:3306)/app'
  OUTBOX_DSN=postgres://app@db/app streamq-outbox status --db-driver postgres --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), stdout) },
	}
	o.db.add(cmd)
	o.redis.add(cmd, "Redis URL of the relays' reports (default $REDIS_URL, else "+defaultRedisURL+")")
	cmd.Flags().StringVar(&o.name, "name", "", "the outbox's name in Redis (default TABLE, or TABLE:GROUP)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON")
	return cmd
}

func (o *statusOpts) run(ctx context.Context, stdout io.Writer) error {
	db, dialect, err := o.db.open(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	lag, err := outbox.ReadLag(ctx, db, dialect, o.db.table, o.db.group)
	if err != nil {
		return err
	}
	v := statusView{Table: o.db.table, Group: o.db.group, Pending: lag.Pending, OldestAgeMs: lag.OldestAge.Milliseconds()}
	v.Relays, err = o.relays(ctx)
	if err != nil {
		v.RedisError = err.Error()
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	printStatus(stdout, v, lag)
	return nil
}

// relays reads the relays' report of the outbox; nil, nil when there is none.
func (o *statusOpts) relays(ctx context.Context) (*relaysView, error) {
	rdb, err := dialRedis(ctx, o.redis.resolved(defaultRedisURL))
	if err != nil {
		return nil, err
	}
	defer func() { _ = rdb.Close() }()
	adm, err := admin.New(rdb, admin.Options{Keyspace: streamq.Keyspace{StreamPrefix: o.redis.streamPrefix, ControlPrefix: o.redis.controlPrefix}})
	if err != nil {
		return nil, err
	}
	name := o.name
	if name == "" {
		name = o.db.table
		if o.db.group != outbox.DefaultConsumerGroup {
			name += ":" + o.db.group
		}
	}
	s, err := adm.OutboxStatus(ctx, name)
	if errors.Is(err, admin.ErrOutboxNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r := &relaysView{Name: name, Moved: s.Moved, SinceReportMs: s.SinceReport.Milliseconds(), Total: len(s.Relays)}
	for _, rel := range s.Relays {
		if rel.Live {
			r.Live++
		}
	}
	return r, nil
}

func printStatus(w io.Writer, v statusView, lag outbox.Lag) {
	printf(w, "table:         %s (group %s)\n", v.Table, v.Group)
	printf(w, "rows waiting:  %d\n", v.Pending)
	if v.Pending > 0 {
		printf(w, "oldest:        %s\n", lag.OldestAge.Round(time.Millisecond))
	}
	switch {
	case v.RedisError != "":
		printf(w, "relays:        unknown (%s)\n", v.RedisError)
	case v.Relays == nil:
		printf(w, "relays:        none reported into Redis: is a relay running?\n")
	default:
		printf(w, "moved:         %d\n", v.Relays.Moved)
		printf(w, "relays:        %d live of %d, last report %s ago\n", v.Relays.Live, v.Relays.Total,
			(time.Duration(v.Relays.SinceReportMs) * time.Millisecond).Round(time.Second))
		if v.Relays.Live == 0 {
			printf(w, "no relay reporting: is a relay running?\n")
		}
	}
}
