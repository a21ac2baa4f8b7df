package outbox_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/outbox"
)

// binary is streamq-outbox, built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "streamq-outbox-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "streamq-outbox")
	build := exec.Command("go", "build", "-o", binary, "./cmd/streamq-outbox")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "go build ./cmd/streamq-outbox:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// dialects are the databases every SQL test runs on.
var dialects = []struct {
	name string
	d    outbox.Dialect
}{{"MariaDB", outbox.MySQL}, {"PostgreSQL", outbox.PostgreSQL}}

// forEachDB runs fn as a subtest on each database.
func forEachDB(t *testing.T, fn func(t *testing.T, d outbox.Dialect)) {
	for _, db := range dialects {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			fn(t, db.d)
		})
	}
}

// forEachDBSerial is forEachDB one database after the other, for tests that count
// goroutines.
func forEachDBSerial(t *testing.T, fn func(t *testing.T, d outbox.Dialect)) {
	for _, db := range dialects {
		t.Run(db.name, func(t *testing.T) { fn(t, db.d) })
	}
}

// requireSQL: STREAMQ_REQUIRE_SQL=1 makes an unreachable database fail the tests instead of
// skipping them (CI sets it).
func requireSQL() bool { return os.Getenv("STREAMQ_REQUIRE_SQL") == "1" }

// dsn is the test database of d: $STREAMQ_TEST_MYSQL_DSN / $STREAMQ_TEST_POSTGRES_DSN, else
// the local servers (MariaDB root without password, PostgreSQL postgres with trust auth),
// database test.
func dsn(d outbox.Dialect) (driver, dsn string) {
	if d == outbox.MySQL {
		return "mysql", envOr("STREAMQ_TEST_MYSQL_DSN", "root@tcp(127.0.0.1:3306)/test")
	}
	return "pgx", envOr("STREAMQ_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// openDB opens the test database of d, closed at cleanup; skips (or fails, see requireSQL)
// when it cannot be reached.
func openDB(t testing.TB, d outbox.Dialect) *sql.DB {
	t.Helper()
	driver, source := dsn(d)
	db, err := sql.Open(driver, source)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		if requireSQL() {
			t.Fatalf("%s database unreachable at %s (STREAMQ_REQUIRE_SQL=1): %v", d, source, err)
		}
		t.Skipf("%s database unreachable at %s: %v (set STREAMQ_REQUIRE_SQL=1 to fail instead)", d, source, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// env is one test's outbox: its own tables in a real database, and its own redis-server.
type env struct {
	t        testing.TB
	ctx      context.Context
	d        outbox.Dialect
	db       *sql.DB
	table    string
	rdb      *redis.Client
	redisURL string
	adm      *admin.Admin
}

// newEnv creates tables TABLE, TABLE_offsets (the migration) and TABLE_biz (the service's
// business rows) with a random name, dropped at cleanup, and starts a redis-server.
func newEnv(t testing.TB, d outbox.Dialect) *env {
	t.Helper()
	db := openDB(t, d)
	srv := redistest.Start(t)
	e := &env{t: t, ctx: context.Background(), d: d, db: db, table: "obx_" + randomHex(6),
		rdb: srv.Client(t), redisURL: srv.URL()}
	adm, err := admin.New(e.rdb, admin.Options{})
	require.NoError(t, err)
	e.adm = adm
	t.Cleanup(func() {
		for _, tbl := range []string{e.table, e.table + "_offsets", e.table + "_biz"} {
			_, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+tbl)
		}
	})
	require.NoError(t, outbox.Migrate(e.ctx, db, d, e.table))
	_, err = db.ExecContext(e.ctx, "CREATE TABLE "+e.table+"_biz (id VARCHAR(64) PRIMARY KEY)")
	require.NoError(t, err)
	return e
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// fastRelay is a RelayConfig for tests: short polls and reports, 8 partitions per topic.
func (e *env) fastRelay() outbox.RelayConfig {
	return outbox.RelayConfig{DB: e.db, Dialect: e.d, Table: e.table, Redis: e.rdb,
		PollInterval: 20 * time.Millisecond, ReportInterval: 200 * time.Millisecond, CloseTimeout: 5 * time.Second,
		Publisher: streamq.PublisherConfig{DefaultPartitionCount: 8}}
}

// startRelay builds and runs a relay, closed at cleanup.
func (e *env) startRelay(cfg outbox.RelayConfig) *outbox.Relay {
	t := e.t
	t.Helper()
	r, err := outbox.NewRelay(cfg)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- r.Run(e.ctx) }()
	t.Cleanup(func() {
		require.NoError(t, r.Close())
		require.NoError(t, <-done)
	})
	return r
}

// publishTx writes a business row and msgs for topic in one transaction, then commits or
// rolls back.
func (e *env) publishTx(commit bool, topic string, msgs ...*message.Message) {
	t := e.t
	t.Helper()
	tx, err := e.db.BeginTx(e.ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(e.ctx, e.insertBiz(), msgs[0].UUID)
	require.NoError(t, err)
	pub, err := outbox.NewPublisher(tx, outbox.Config{Dialect: e.d, Table: e.table})
	require.NoError(t, err)
	require.NoError(t, pub.Publish(topic, msgs...))
	require.NoError(t, pub.Close())
	if commit {
		require.NoError(t, tx.Commit())
	} else {
		require.NoError(t, tx.Rollback())
	}
}

func (e *env) insertBiz() string {
	if e.d == outbox.MySQL {
		return "INSERT INTO " + e.table + "_biz (id) VALUES (?)"
	}
	return "INSERT INTO " + e.table + "_biz (id) VALUES ($1)"
}

// bizRows counts the business rows.
func (e *env) bizRows() int {
	var n int
	require.NoError(e.t, e.db.QueryRowContext(e.ctx, "SELECT COUNT(*) FROM "+e.table+"_biz").Scan(&n))
	return n
}

// keyed is a message with a partition key and a sequence number in metadata.
func keyed(key string, seq int) *message.Message {
	m := message.NewMessage(watermill.NewUUID(), []byte(key+"#"+strconv.Itoa(seq)))
	m.Metadata.Set(streamq.PartitionKeyMetadata, key)
	m.Metadata.Set("seq", strconv.Itoa(seq))
	return m
}

// entries lists every entry of topic, partition by partition in stream order; none when
// the topic does not exist yet.
func (e *env) entries(topic string) []admin.Entry {
	t := e.t
	t.Helper()
	info, err := e.adm.QueueInfo(e.ctx, topic)
	if err != nil {
		require.ErrorIs(t, err, admin.ErrTopicNotFound)
		return nil
	}
	var all []admin.Entry
	for p := range info.Partitions {
		got, err := e.adm.Range(e.ctx, topic, p, "-", "+", 1_000_000)
		require.NoError(t, err)
		all = append(all, got...)
	}
	return all
}

// uuidCounts counts the entries of topic per message UUID.
func (e *env) uuidCounts(topic string) map[string]int {
	counts := map[string]int{}
	for _, en := range e.entries(topic) {
		counts[en.UUID]++
	}
	return counts
}

// waitMoved waits until topic holds n distinct UUIDs and the outbox has no row waiting.
func (e *env) waitMoved(topic string, n int, timeout time.Duration) {
	t := e.t
	t.Helper()
	require.Eventually(t, func() bool {
		lag, err := outbox.ReadLag(e.ctx, e.db, e.d, e.table, "")
		return err == nil && lag.Pending == 0 && len(e.uuidCounts(topic)) >= n
	}, timeout, 20*time.Millisecond, "topic %s: %d distinct messages, want %d", topic, len(e.uuidCounts(topic)), n)
}
