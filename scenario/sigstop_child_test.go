package scenario_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// The child process of TestPausedOwnerProcessIsFenced is this test binary run again with
// -test.run=^TestSigstopChild$ and these variables set.
const (
	sigstopChildEnv  = "STREAMQ_SIGSTOP_CHILD" // "1" in the child
	sigstopAddrEnv   = "STREAMQ_SIGSTOP_ADDR"  // Redis address (through the parent's proxy)
	sigstopTopicEnv  = "STREAMQ_SIGSTOP_TOPIC"
	sigstopLedgerEnv = "STREAMQ_SIGSTOP_LEDGER" // JSON-lines file the child reports into
)

// The child's subscription: member "stale" of group "g", with a short lease.
const (
	sigstopGroup  = "g"
	sigstopMember = "stale"
	sigstopTTL    = time.Second
)

// sigstopTimes are the lease timings of both members of the test. The pending scan is far
// off, so that on resume nothing but the lease stands between the child's worker and its
// next prefetched message.
func sigstopTimes(c *streamq.SubscriberConfig) {
	c.Membership.LeaseTTL = sigstopTTL
	c.Membership.RenewInterval = 200 * time.Millisecond
	c.Membership.RebalanceInterval = 100 * time.Millisecond
	c.Delivery.CloseTimeout = time.Second
	c.Reclaim.ScanInterval = time.Minute
}

// childEvent is one line of the child's ledger. Ev is "subscribed", "deliver" (a message
// reached the child's handler), "holding" (the handler keeps the first message unacked until
// told), "acked", "lost" (Stats().LeasesLost grew), "log" (an error the library logged) or
// "closed" (after Close, with the final counters).
type childEvent struct {
	Ev         string `json:"ev"`
	UUID       string `json:"uuid,omitempty"`
	Seq        string `json:"seq,omitempty"`
	Partition  int    `json:"p"`
	Msg        string `json:"msg,omitempty"`
	LeasesLost int64  `json:"leasesLost,omitempty"`
	Delivered  int64  `json:"delivered,omitempty"`
	Count      int64  `json:"count,omitempty"` // delivery count (static member children)
	T          int64  `json:"t,omitempty"`     // Unix ns (static member children)
}

// childLedger appends events to a file, one write per line, so a line is in the file before
// the child acts on what it records (and survives the child being killed).
type childLedger struct {
	mu sync.Mutex
	f  *os.File
}

func (l *childLedger) write(e childEvent) {
	line, _ := json.Marshal(e)
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.f.Write(append(line, '\n'))
}

// childLogger records the library's error logs in the ledger (the cause of a lost lease).
type childLogger struct{ ledger *childLedger }

func (l childLogger) Error(msg string, err error, fields watermill.LogFields) {
	l.ledger.write(childEvent{Ev: "log", Msg: fmt.Sprintf("%s: %v %v", msg, err, fields)})
}
func (l childLogger) Info(string, watermill.LogFields)                 {}
func (l childLogger) Debug(string, watermill.LogFields)                {}
func (l childLogger) Trace(string, watermill.LogFields)                {}
func (l childLogger) With(watermill.LogFields) watermill.LoggerAdapter { return l }

// TestSigstopChild is the paused owner of TestPausedOwnerProcessIsFenced. In a normal test
// run (the variable unset) it does nothing.
func TestSigstopChild(_ *testing.T) {
	if os.Getenv(sigstopChildEnv) != "1" {
		return
	}
	os.Exit(runSigstopChild())
}

func runSigstopChild() int {
	f, err := os.OpenFile(os.Getenv(sigstopLedgerEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open ledger:", err)
		return 2
	}
	defer f.Close()
	ledger := &childLedger{f: f}
	client := redis.NewClient(&redis.Options{Addr: os.Getenv(sigstopAddrEnv), MaxRetries: -1,
		ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second})
	defer client.Close()
	cfg := streamqtest.FastSub(client, sigstopGroup)
	cfg.Membership.ConsumerName = sigstopMember
	sigstopTimes(&cfg)
	sub, err := streamq.NewSubscriber(cfg, childLogger{ledger})
	if err != nil {
		fmt.Fprintln(os.Stderr, "subscriber:", err)
		return 2
	}
	ch, err := sub.Subscribe(context.Background(), os.Getenv(sigstopTopicEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "subscribe:", err)
		return 2
	}
	ledger.write(childEvent{Ev: "subscribed"})
	cmds := readCommands()
	go watchLeasesLost(sub, ledger)
	consumeAsChild(ch, cmds, ledger)
	_ = sub.Close()
	s := sub.Stats()
	ledger.write(childEvent{Ev: "closed", LeasesLost: s.LeasesLost, Delivered: s.Delivered})
	return 0
}

// readCommands forwards the lines the parent writes to stdin ("ack", "quit"); end of file
// (the parent died) reads as "quit".
func readCommands() <-chan string {
	cmds := make(chan string)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			cmds <- sc.Text()
		}
		cmds <- "quit"
	}()
	return cmds
}

// watchLeasesLost writes a "lost" event each time the subscriber's LeasesLost counter grows.
func watchLeasesLost(sub *streamq.Subscriber, ledger *childLedger) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var seen int64
	for range tick.C {
		if n := sub.Stats().LeasesLost; n > seen {
			seen = n
			ledger.write(childEvent{Ev: "lost", LeasesLost: n})
		}
	}
}

// consumeAsChild records every delivery, holds the first message until "ack", acks the
// others at once, and returns on "quit".
func consumeAsChild(ch <-chan *message.Message, cmds <-chan string, ledger *childLedger) {
	held := false
	for {
		select {
		case m, ok := <-ch:
			if !ok {
				return
			}
			p, _ := streamq.PartitionFromCtx(m.Context())
			ledger.write(childEvent{Ev: "deliver", UUID: m.UUID, Seq: m.Metadata.Get("seq"), Partition: p})
			if !held {
				held = true
				ledger.write(childEvent{Ev: "holding", UUID: m.UUID, Seq: m.Metadata.Get("seq"), Partition: p})
				if <-cmds != "ack" {
					return
				}
				m.Ack()
				ledger.write(childEvent{Ev: "acked", UUID: m.UUID, Partition: p})
				continue
			}
			m.Ack()
		case c := <-cmds:
			if c == "quit" {
				return
			}
		}
	}
}

// childEvents reads the child's ledger.
func childEvents(path string) ([]childEvent, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("open child ledger: %w", err)
	}
	// A running child may be writing its last line: only whole lines (ended by a newline)
	// are read; what follows the last newline is left for the next read.
	lines := bytes.Split(b, []byte("\n"))
	lines = lines[:len(lines)-1]
	out := make([]childEvent, 0, len(lines))
	for _, line := range lines {
		var e childEvent
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("child ledger line %d: %w", len(out)+1, err)
		}
		out = append(out, e)
	}
	return out, nil
}
