package scenario_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// TestEffectivelyOnceThroughKills is #30's first acceptance: a stage handling topic A into
// topic B (a child process: a Router over a streamq Subscriber and a default streamq
// Publisher) is SIGKILLed between publishing its outputs and acking its input, over and
// over; the next child is handed the input again. With DeriveUUIDs, B then holds exactly
// one entry per (input, output index). Without it (the control) B holds duplicates.
func TestEffectivelyOnceThroughKills(t *testing.T) {
	t.Parallel()
	t.Run("derived", func(t *testing.T) {
		t.Parallel()
		const inputs = 5000
		kills, entries := runPipelineKills(t, true, inputs, 400, 0)
		t.Logf("%d kills between publish and ack over %d inputs", kills, inputs)
		assert.GreaterOrEqual(t, kills, 5, "killed many times")
		require.Len(t, entries, 2*inputs, "one entry per (input, output index)")
		for k, n := range entries {
			require.Equal(t, 1, n, "output %s appended %d times", k, n)
		}
	})
	t.Run("control", func(t *testing.T) {
		t.Parallel()
		const inputs = 1000
		kills, entries := runPipelineKills(t, false, inputs, 100, 4)
		dup := 0
		for _, n := range entries {
			dup += n - 1
		}
		t.Logf("%d kills, %d duplicate outputs without DeriveUUIDs", kills, dup)
		assert.Positive(t, dup, "the control shows duplicates")
	})
}

// runPipelineKills publishes inputs to a topic and runs children of the stage until the
// group handled every input (or, maxKills > 0, until that many kills); it returns the kills
// and how many entries of the output topic each (input, index) has.
func runPipelineKills(t *testing.T, derive bool, inputs, killEvery, maxKills int) (int, map[string]int) {
	srv, client := streamqtest.StartRedis(t)
	in, out := "pipe-in", "pipe-out"
	streamqtest.PublishNumbered(t, client, in, inputs)
	kills := 0
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPipelineChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), pipeChildEnv+"=1", pipeAddrEnv+"="+srv.Addr(), pipeInEnv+"="+in, pipeOutEnv+"="+out,
			pipeDeriveEnv+"="+map[bool]string{true: "1"}[derive], pipeKillEnv+"="+strconv.Itoa(killEvery))
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		require.NoError(t, cmd.Start())
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if !waitChild(t, client, in, inputs, exited) {
			_ = cmd.Process.Kill()
			if err := <-exited; err == nil {
				t.Log("the last child exited before its kill")
			}
			break // every input handled
		}
		kills++
		if maxKills > 0 && kills >= maxKills {
			break
		}
	}
	require.True(t, time.Now().Before(deadline), "the stage did not finish in time")
	return kills, pipeOutputs(t, client, out)
}

// waitChild waits until the child killed itself (true) or the group handled every input
// (false).
func waitChild(t *testing.T, client redis.UniversalClient, topic string, inputs int, exited chan error) bool {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "child: %v", err)
			require.Equal(t, syscall.SIGKILL, ee.Sys().(syscall.WaitStatus).Signal(), "the child died of its own SIGKILL")
			return true
		case <-tick.C:
			if groupDone(t, client, topic, inputs) {
				return false
			}
		}
	}
}

// groupDone reports whether the stage's group acked all inputs of topic's 4 partitions.
func groupDone(t *testing.T, client redis.UniversalClient, topic string, inputs int) bool {
	ctx := context.Background()
	read := int64(0)
	for p := range 4 {
		groups, err := client.XInfoGroups(ctx, fmt.Sprintf("stream:topic:{%s:p:%d}", topic, p)).Result()
		require.NoError(t, err)
		for _, g := range groups {
			if g.Name != pipeGroup {
				continue
			}
			if g.Pending > 0 || g.Lag > 0 {
				return false
			}
			read += g.EntriesRead
		}
	}
	return read >= int64(inputs)
}

// pipeOutputs counts the output topic's entries by (input, index).
func pipeOutputs(t *testing.T, client redis.UniversalClient, topic string) map[string]int {
	out := map[string]int{}
	for p := range 4 {
		entries, err := client.XRange(context.Background(), fmt.Sprintf("stream:topic:{%s:p:%d}", topic, p), "-", "+").Result()
		require.NoError(t, err)
		for _, e := range entries {
			m, err := streamq.DefaultMarshaler{}.Unmarshal(e.Values)
			require.NoError(t, err)
			out[m.Metadata.Get("in")+"#"+m.Metadata.Get("idx")]++
		}
	}
	return out
}

// TestEffectivelyOnceThroughFailedAcks: on a single node and a Cluster, a stage's publish of
// outputs reaches Redis but reports an error every third time (a reply lost on the way
// back), so the Router nacks the input and it is retried; with DeriveUUIDs the outputs the
// retry publishes again are dropped, by a default Publisher.
func TestEffectivelyOnceThroughFailedAcks(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, func(t *testing.T, client redis.UniversalClient) {
		const inputs = 300
		in, out := "fa-in", "fa-out"
		streamqtest.PublishNumbered(t, client, in, inputs)
		sub := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, pipeGroup))
		lossy := &lossyPublisher{Publisher: streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4})}
		r, err := message.NewRouter(message.RouterConfig{CloseTimeout: 5 * time.Second}, streamqtest.Logger())
		require.NoError(t, err)
		r.AddMiddleware(streamq.DeriveUUIDs)
		r.AddHandler("stage", in, sub, out, lossy, pipeStage)
		go func() { _ = r.Run(context.Background()) }()
		t.Cleanup(func() { _ = r.Close() })
		require.Eventually(t, func() bool { return len(pipeOutputs(t, client, out)) == 2*inputs && groupDone(t, client, in, inputs) },
			time.Minute, 100*time.Millisecond)
		for k, n := range pipeOutputs(t, client, out) {
			require.Equal(t, 1, n, "output %s appended %d times", k, n)
		}
		assert.Positive(t, lossy.lost.Load())
		t.Logf("%d publishes reported failed after reaching Redis", lossy.lost.Load())
	})
}

// lossyPublisher publishes, and reports every third publish as failed.
type lossyPublisher struct {
	*streamq.Publisher
	n, lost atomic.Int64
}

func (l *lossyPublisher) Publish(topic string, msgs ...*message.Message) error {
	if err := l.Publisher.Publish(topic, msgs...); err != nil {
		return err
	}
	if l.n.Add(1)%3 == 0 {
		l.lost.Add(1)
		return errors.New("reply lost")
	}
	return nil
}
