package outbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/outbox"
)

// crashRows and crashBatch: the child relay reads batches of crashBatch rows; each attempt
// kills it once crashKillAfter more entries are in the stream, which lands inside a batch
// unless it falls between two (while the relay stores an offset and reads the next batch,
// up to a tenth of the time on PostgreSQL): then another attempt, up to crashAttempts.
const crashRows, crashBatch, crashKillAfter, crashAttempts = 5000, 400, 150, 6

// crash is the outcome of killing a relay process mid-batch.
type crash struct {
	inStream int // distinct messages in the stream when the relay died
	acked    int // rows whose offset the relay stored
}

// killRelayMidBatch fills the outbox with crashRows messages, a fifth of them without a
// partition key, and runs the streamq-outbox binary's relay with window (its --window),
// SIGKILLing it once it appended crashKillAfter entries, until a kill lands mid-batch: more
// messages in the stream than rows acked.
func (e *env) killRelayMidBatch(topic, window string) crash {
	t := e.t
	t.Helper()
	var batch []*message.Message
	for i := range crashRows {
		m := keyed("k"+strconv.Itoa(i%16), i/16)
		if i%5 == 0 {
			delete(m.Metadata, streamq.PartitionKeyMetadata) // keyless: partitioned by its UUID
		}
		batch = append(batch, m)
		if len(batch) == 100 {
			e.publishTx(true, topic, batch...)
			batch = nil
		}
	}
	for attempt := 1; attempt <= crashAttempts; attempt++ {
		c := e.killRelayOnce(topic, window)
		t.Logf("attempt %d: relay killed with %d messages in the stream and %d rows acked", attempt, c.inStream, c.acked)
		require.Less(t, c.inStream, crashRows, "the relay moved everything before the kill")
		if c.inStream > c.acked {
			return c
		}
	}
	t.Fatalf("%d kills all fell between two batches: nothing was moved twice", crashAttempts)
	return crash{}
}

// killRelayOnce runs the relay binary until it appended crashKillAfter entries, SIGKILLs it
// and reads what it left.
func (e *env) killRelayOnce(topic, window string) crash {
	t := e.t
	t.Helper()
	_, source := dsn(e.d)
	logFile, err := os.Create(filepath.Join(t.TempDir(), "relay.log"))
	require.NoError(t, err)
	defer logFile.Close()
	cmd := exec.Command(binary, "relay", "--db-driver", string(e.d), "--db-dsn", source, "--redis-url", e.redisURL,
		"--table", e.table, "--window", window, "--batch-size", strconv.Itoa(crashBatch), "--partitions", "4",
		"--poll-interval", "20ms", "--report-interval", "100ms")
	cmd.Env = append(os.Environ(), "REDIS_URL=", "OUTBOX_DSN=")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	from := e.streamLength(topic)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Wait() }()
	defer func() { _ = cmd.Process.Kill() }() // when the wait below fails
	require.Eventually(t, func() bool { return e.streamLength(topic) >= from+crashKillAfter }, 60*time.Second,
		time.Millisecond, "the child relay moved nothing; its log is %s", logFile.Name())
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	lag, err := outbox.ReadLag(e.ctx, e.db, e.d, e.table, "")
	require.NoError(t, err)
	return crash{inStream: len(e.uuidCounts(topic)), acked: crashRows - int(lag.Pending)}
}

// streamLength is the number of entries of topic over its partitions (0 before it exists).
func (e *env) streamLength(topic string) int {
	info, err := e.adm.QueueInfo(e.ctx, topic)
	if err != nil {
		return 0
	}
	return int(info.Length)
}

// TestKilledRelayNothingLostNothingTwice: a relay process killed (SIGKILL) mid-batch had
// published messages whose rows it never acked; another relay moves those rows again, and
// the stream still holds every message exactly once, over all partitions. This holds
// because of streamq's idempotent publish (the relay's IdempotencyWindow):
// TestKilledRelayWithoutIdempotencyAppendsTwice shows the same crash without it.
func TestKilledRelayNothingLostNothingTwice(t *testing.T) {
	forEachDB(t, func(t *testing.T, d outbox.Dialect) {
		const topic = "crash"
		e := newEnv(t, d)
		c := e.killRelayMidBatch(topic, "1h")
		reg := prom.NewRegistry()
		cfg := e.fastRelay()
		cfg.Registerer = reg
		e.startRelay(cfg)
		e.waitMoved(topic, crashRows, 60*time.Second)
		assert.Equal(t, float64(c.inStream-c.acked), metricValue(t, reg, "streamq_outbox_duplicates_dropped_total"),
			"the messages published but not acked before the kill are published again, and dropped by streamq")
		counts := e.uuidCounts(topic)
		assert.Len(t, counts, crashRows, "every message is in the stream")
		var twice []string
		for uuid, n := range counts {
			if n != 1 {
				twice = append(twice, uuid)
			}
		}
		assert.Zero(t, len(twice), "messages in the stream more than once (is streamq's idempotent publish in?), e.g. %v",
			twice[:min(3, len(twice))])
	})
}

// TestKilledRelayWithoutIdempotencyAppendsTwice is the control of
// TestKilledRelayNothingLostNothingTwice: with the idempotency window off (--window off,
// IdempotencyWindow -1) the messages the killed relay published but did not ack are
// appended a second time, once each, and nothing is lost.
func TestKilledRelayWithoutIdempotencyAppendsTwice(t *testing.T) {
	const topic = "crash"
	e := newEnv(t, outbox.MySQL)
	c := e.killRelayMidBatch(topic, "off")
	cfg := e.fastRelay()
	cfg.IdempotencyWindow = -1
	e.startRelay(cfg)
	e.waitMoved(topic, crashRows, 60*time.Second)
	counts := e.uuidCounts(topic)
	assert.Len(t, counts, crashRows, "every message is in the stream")
	twice := 0
	for _, n := range counts {
		require.LessOrEqual(t, n, 2)
		if n == 2 {
			twice++
		}
	}
	assert.Equal(t, c.inStream-c.acked, twice, "the messages published but not acked before the kill are appended again")
}
