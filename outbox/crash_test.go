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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/outbox"
)

// crashRows and crashBatch: the child relay reads batches of crashBatch rows, so a kill
// after crashKillAt messages lands inside a batch unless it falls exactly between two.
const crashRows, crashBatch, crashKillAt = 2000, 400, 600

// crash is the outcome of killing a relay process mid-batch.
type crash struct {
	inStream int // distinct messages in the stream when the relay died
	acked    int // rows whose offset the relay stored
}

// killRelayMidBatch fills the outbox with crashRows messages, runs the streamq-outbox binary's
// relay with window (its --window), SIGKILLs it once crashKillAt messages are in the stream,
// and reports how many were in the stream and how many rows were acked.
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
	_, source := dsn(e.d)
	logPath := filepath.Join(t.TempDir(), "relay.log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	defer logFile.Close()
	cmd := exec.Command(binary, "relay", "--db-driver", string(e.d), "--db-dsn", source, "--redis-url", e.redisURL,
		"--table", e.table, "--window", window, "--batch-size", strconv.Itoa(crashBatch), "--partitions", "4",
		"--poll-interval", "20ms", "--report-interval", "100ms")
	cmd.Env = append(os.Environ(), "REDIS_URL=", "OUTBOX_DSN=")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	require.Eventually(t, func() bool { return len(e.uuidCounts(topic)) >= crashKillAt }, 60*time.Second, 2*time.Millisecond,
		"the child relay moved nothing; its log %s", logPath)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	killed = true

	lag, err := outbox.ReadLag(e.ctx, e.db, e.d, e.table, "")
	require.NoError(t, err)
	c := crash{inStream: len(e.uuidCounts(topic)), acked: crashRows - int(lag.Pending)}
	t.Logf("relay killed with %d messages in the stream and %d rows acked", c.inStream, c.acked)
	require.Greater(t, c.inStream, c.acked,
		"the kill fell between two batches (every message in the stream was acked): nothing to move twice; run again")
	require.Less(t, c.inStream, crashRows, "the relay moved everything before the kill")
	return c
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
		e.killRelayMidBatch(topic, "1h")
		e.startRelay(e.fastRelay())
		e.waitMoved(topic, crashRows, 60*time.Second)
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
