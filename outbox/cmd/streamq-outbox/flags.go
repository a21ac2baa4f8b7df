package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"time"

	_ "github.com/go-sql-driver/mysql" // database/sql driver "mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/outbox"
)

const defaultRedisURL = "redis://127.0.0.1:6379"

// pingTimeout bounds the connection checks before a command runs.
const pingTimeout = 5 * time.Second

// dbFlags are the flags naming the outbox: database, table, group.
type dbFlags struct {
	driver, dsn, table, group string
}

func (f *dbFlags) add(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.driver, "db-driver", "", "the database: mysql (MySQL, MariaDB) or postgres (required)")
	fs.StringVar(&f.dsn, "db-dsn", "", "the database's DSN (default $OUTBOX_DSN), e.g. 'root@tcp(127.0.0.1:3306)/app'\n"+
		"or 'postgres://user@127.0.0.1:5432/app'")
	fs.StringVar(&f.table, "table", outbox.DefaultTable, "the outbox table")
	fs.StringVar(&f.group, "consumer-group", outbox.DefaultConsumerGroup, "the relays' consumer group")
}

// dialect checks --db-driver.
func (f *dbFlags) dialect() (outbox.Dialect, string, error) {
	switch f.driver {
	case "mysql", "mariadb":
		return outbox.MySQL, "mysql", nil
	case "postgres", "postgresql", "pgx":
		return outbox.PostgreSQL, "pgx", nil
	}
	return "", "", usageErrorf("--db-driver must be mysql or postgres, got %q", f.driver)
}

// open opens and pings the database.
func (f *dbFlags) open(ctx context.Context) (*sql.DB, outbox.Dialect, error) {
	d, driver, err := f.dialect()
	if err != nil {
		return nil, "", err
	}
	dsn := f.dsn
	if dsn == "" {
		dsn = os.Getenv("OUTBOX_DSN")
	}
	if dsn == "" {
		return nil, "", usageErrorf("no database: pass --db-dsn or set OUTBOX_DSN")
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, "", usageErrorf("invalid --db-dsn: %v", err)
	}
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		_ = db.Close()
		return nil, "", fmt.Errorf("cannot reach the %s database: %w", f.driver, err)
	}
	return db, d, nil
}

// redisFlags name the streamq Redis.
type redisFlags struct {
	url, streamPrefix, controlPrefix string
}

func (f *redisFlags) add(cmd *cobra.Command, usage string) {
	fs := cmd.Flags()
	fs.StringVar(&f.url, "redis-url", "", usage)
	fs.StringVar(&f.streamPrefix, "prefix-stream", "", "key prefix of the partition streams (default \"stream:topic\"); must match the consumers'")
	fs.StringVar(&f.controlPrefix, "prefix-control", "", "key prefix of the control keys (default \"streaming:mq\"); must match the consumers'")
}

// resolved is --redis-url, else $REDIS_URL, else fallback.
func (f *redisFlags) resolved(fallback string) string {
	switch {
	case f.url != "":
		return f.url
	case os.Getenv("REDIS_URL") != "":
		return os.Getenv("REDIS_URL")
	}
	return fallback
}

// dial connects to raw and pings.
func dialRedis(ctx context.Context, raw string) (redis.UniversalClient, error) {
	opts, err := redis.ParseURL(raw)
	if err != nil {
		return nil, usageErrorf("invalid --redis-url: %v", err)
	}
	c := redis.NewClient(opts)
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("cannot reach Redis at %s: %w", opts.Addr, err)
	}
	return c, nil
}

// parseWindow reads --window: a duration, or "off".
func parseWindow(s string) (time.Duration, error) {
	if s == "off" {
		return -1, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, usageErrorf("--window must be a positive duration (1h, 90m) or off, got %q", s)
	}
	return d, nil
}
