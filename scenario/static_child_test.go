package scenario_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// The child processes of the static member tests are this test binary run again with
// -test.run=^TestStaticChild$ and these variables set.
const (
	staticChildEnv  = "STREAMQ_STATIC_CHILD" // "1" in the child
	staticAddrsEnv  = "STREAMQ_STATIC_ADDRS" // Redis addresses, comma-separated (several: a cluster)
	staticTopicEnv  = "STREAMQ_STATIC_TOPIC"
	staticNameEnv   = "STREAMQ_STATIC_NAME"
	staticHoldEnv   = "STREAMQ_STATIC_HOLD" // "1": messages with metadata hold=1 stay unacked until "ack"
	staticLedgerEnv = "STREAMQ_STATIC_LEDGER"
	staticTimesEnv  = "STREAMQ_STATIC_TIMES" // a key of staticTimings: "" or "slow"
)

// The static members of the child-process tests: group "g", 12 partitions, a presence window
// of 375ms (three quarters of a RebalanceInterval) and a grace of one LeaseTTL.
const (
	staticGroup      = "g"
	staticPartitions = 12
)

// staticTimings are the lease times of the static member processes, by the name a child
// reads from staticTimesEnv: staticTimes ("") and staticSlowTimes ("slow").
var staticTimings = map[string]func(*streamq.SubscriberConfig){"": staticTimes, "slow": staticSlowTimes}

// staticSlowTimes are the times of a restart measured against RebalanceInterval: 3s, so the
// margin left for starting a process is not lost in the noise of a busy machine (a presence
// window of 2.25s), LeaseTTL and grace of 10s.
func staticSlowTimes(c *streamq.SubscriberConfig) {
	staticTimes(c)
	c.Membership.LeaseTTL = 10 * time.Second
	c.Membership.RenewInterval = time.Second
	c.Membership.RebalanceInterval = 3 * time.Second
	c.Membership.StaticMemberGrace = 10 * time.Second
}

func staticTimes(c *streamq.SubscriberConfig) {
	c.Membership.LeaseTTL = 3 * time.Second
	c.Membership.RenewInterval = 500 * time.Millisecond
	c.Membership.RebalanceInterval = 500 * time.Millisecond
	c.Membership.StaticMemberGrace = 3 * time.Second
	c.Delivery.CloseTimeout = time.Second
	c.Reclaim.ScanInterval = time.Minute // takeover claims, not the safety net, hand pending entries over
	c.DefaultPartitionCount = staticPartitions
}

// startStaticChild starts member name as a child process on Redis at addrs, with
// staticTimes; hold makes it keep messages published with metadata hold=1 unacked until told
// "ack".
func startStaticChild(t *testing.T, addrs []string, topic, name string, hold bool) *childProc {
	t.Helper()
	return startStaticChildTimed(t, addrs, topic, name, hold, "")
}

// startStaticChildTimed is startStaticChild with the times staticTimings[times].
func startStaticChildTimed(t *testing.T, addrs []string, topic, name string, hold bool, times string) *childProc {
	t.Helper()
	c := &childProc{ledger: filepath.Join(t.TempDir(), name+".jsonl"), out: &bytes.Buffer{}, done: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0], "-test.run=^TestStaticChild$", "-test.count=1")
	holdVal := map[bool]string{true: "1", false: "0"}[hold]
	c.cmd.Env = append(os.Environ(), "GOTRACEBACK=all", staticChildEnv+"=1", staticAddrsEnv+"="+strings.Join(addrs, ","),
		staticTopicEnv+"="+topic, staticNameEnv+"="+name, staticHoldEnv+"="+holdVal, staticLedgerEnv+"="+c.ledger,
		staticTimesEnv+"="+times)
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var err error
	c.stdin, err = c.cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, c.cmd.Start())
	go func() {
		_ = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		<-c.done
		if t.Failed() {
			t.Logf("child %s output:\n%s", name, c.out.String())
			events, _ := childEvents(c.ledger)
			t.Logf("child %s ledger: %+v", name, events)
		}
	})
	return c
}

// TestStaticChild is the static member process of the static member tests. In a normal test
// run (the variable unset) it does nothing.
func TestStaticChild(_ *testing.T) {
	if os.Getenv(staticChildEnv) != "1" {
		return
	}
	os.Exit(runStaticChild())
}

func runStaticChild() int {
	f, err := os.OpenFile(os.Getenv(staticLedgerEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open ledger:", err)
		return 2
	}
	defer f.Close()
	ledger := &childLedger{f: f}
	ledger.write(childEvent{Ev: "start", T: time.Now().UnixNano()})
	client := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: strings.Split(os.Getenv(staticAddrsEnv), ","),
		MaxRetries: -1, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second})
	defer client.Close()
	cfg := streamq.SubscriberConfig{Client: client, ConsumerGroup: staticGroup, Membership: streamq.MembershipConfig{ConsumerName: os.Getenv(staticNameEnv)}}
	times, ok := staticTimings[os.Getenv(staticTimesEnv)]
	if !ok {
		fmt.Fprintln(os.Stderr, "unknown times:", os.Getenv(staticTimesEnv))
		return 2
	}
	times(&cfg)
	sub, err := streamq.NewSubscriber(cfg, childLogger{ledger})
	if err != nil {
		fmt.Fprintln(os.Stderr, "subscriber:", err)
		return 2
	}
	ch, err := sub.Subscribe(context.Background(), os.Getenv(staticTopicEnv))
	if err != nil {
		ledger.write(childEvent{Ev: "refused", Msg: err.Error(), T: time.Now().UnixNano()})
		return 0
	}
	ledger.write(childEvent{Ev: "subscribed", T: time.Now().UnixNano()})
	go watchLeasesLost(sub, ledger)
	consumeStatic(ch, readCommands(), ledger, os.Getenv(staticHoldEnv) == "1")
	_ = sub.Close()
	s := sub.Stats()
	ledger.write(childEvent{Ev: "closed", LeasesLost: s.LeasesLost, Delivered: s.Delivered})
	return 0
}

// consumeStatic records every delivery and acks it at once, except, with hold, the messages
// with metadata hold=1: those wait for "ack". It returns on "quit" or when ch closes.
func consumeStatic(ch <-chan *message.Message, cmds <-chan string, ledger *childLedger, hold bool) {
	var held []*message.Message
	for {
		select {
		case m, ok := <-ch:
			if !ok {
				return
			}
			p, _ := streamq.PartitionFromCtx(m.Context())
			n, _ := streamq.DeliveryCountFromCtx(m.Context())
			e := childEvent{Ev: "deliver", UUID: m.UUID, Seq: m.Metadata.Get("seq"), Partition: p, Count: n, T: time.Now().UnixNano()}
			ledger.write(e)
			if hold && m.Metadata.Get("hold") == "1" {
				held = append(held, m)
				e.Ev = "holding"
				ledger.write(e)
				continue
			}
			m.Ack()
		case c := <-cmds:
			switch c {
			case "ack":
				for _, m := range held {
					m.Ack()
					ledger.write(childEvent{Ev: "acked", UUID: m.UUID, T: time.Now().UnixNano()})
				}
				held = nil
			case "quit":
				return
			}
		}
	}
}

// childDeliveries are the UUIDs a child's ledger says it delivered.
func childDeliveries(t *testing.T, c *childProc) []childEvent {
	t.Helper()
	var out []childEvent
	for _, e := range c.events(t) {
		if e.Ev == "deliver" {
			out = append(out, e)
		}
	}
	return out
}

// countEvents is how many events of kind ev the child reported (none before it wrote its
// ledger).
func countEvents(t *testing.T, c *childProc, ev string) int {
	t.Helper()
	events, _ := childEvents(c.ledger)
	n := 0
	for _, e := range events {
		if e.Ev == ev {
			n++
		}
	}
	return n
}

// holdMessages are one message for each partition of parts, with metadata hold=1.
func holdMessages(parts []int) []*message.Message {
	msgs := streamqtest.KeyedMessages(0, len(parts), 1)
	for i, m := range msgs {
		m.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(parts[i]))
		m.Metadata.Set("hold", "1")
		m.Metadata.Set("seq", "-1")
	}
	return msgs
}
