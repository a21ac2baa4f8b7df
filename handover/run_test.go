//go:build handover

package handover

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	membership "github.com/streamq-dev/streamq/internal/member"
	"github.com/streamq-dev/streamq/internal/redistest"
)

var (
	flagModes   = flag.String("handover.modes", "graceful,kill", "how a member stops: graceful (Close), kill (SIGKILL)")
	flagMembers = flag.String("handover.members", "static,dynamic,named", "membership kinds: static (stable names, StaticMemberGrace = LeaseTTL), dynamic (generated names), named (stable names, not static)")
	flagRate    = flag.Int("handover.rate", 1000, "messages per second")
	flagSettle  = flag.Duration("handover.settle", 5*time.Second, "how long the group runs balanced after a restart before the next one")
	flagDown    = flag.String("handover.downtime", "0s,3s", "how long a stopped member stays down before it starts again (a process or pod start)")
)

const (
	partitions = 12
	keysN      = 48
	members    = 3
)

// TestRollingRestart runs every scenario and prints its figures and the table.
func TestRollingRestart(t *testing.T) {
	srv := redistest.Start(t)
	client := srv.Client(t)
	var rows []figures
	for _, down := range strings.Split(*flagDown, ",") {
		downtime, err := time.ParseDuration(down)
		require.NoError(t, err)
		for _, kind := range strings.Split(*flagMembers, ",") {
			for _, mode := range strings.Split(*flagModes, ",") {
				f := runScenario(t, srv.Addr(), client, kind, mode, downtime)
				t.Logf("%s", f.detail())
				fmt.Println(table([]figures{f}))
				rows = append(rows, f)
			}
		}
	}
	fmt.Println(table(rows))
}

// scenario is one rolling restart: its members, traffic and lease log.
type scenario struct {
	t        *testing.T
	addr     string
	client   redis.UniversalClient
	kind     string
	mode     string
	downtime time.Duration
	topic    string
	dir      string
	pub      *streamq.Publisher
	leases   *leaseLog

	mu        sync.Mutex
	published []string
	procs     []*member // current incarnation of each slot
	all       []*member // every incarnation
}

type member struct {
	slot    int
	name    string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	done    chan struct{}
	ledger  string
	stopped time.Time
}

func runScenario(t *testing.T, addr string, client redis.UniversalClient, kind, mode string, downtime time.Duration) figures {
	t.Helper()
	require.NoError(t, client.FlushAll(context.Background()).Err())
	s := &scenario{t: t, addr: addr, client: client, kind: kind, mode: mode, downtime: downtime,
		topic: "handover-" + kind + "-" + mode, dir: t.TempDir(), procs: make([]*member, members)}
	var err error
	s.pub, err = streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions}, nil)
	require.NoError(t, err)
	defer s.pub.Close()
	require.NoError(t, s.pub.Publish(s.topic, message.NewMessage(watermill.NewUUID(), []byte("create")))) // the topic, at 12 partitions
	s.leases = startLeaseLog(client, s.topic, partitions)
	defer s.leases.stop()
	for i := range members {
		s.spawn(i)
	}
	s.waitBalanced(nil, 60*time.Second)
	stopTraffic := s.traffic()
	waitFor(3 * time.Second)

	start := time.Now()
	for i := range members {
		old := s.current(i)
		s.stop(old)
		waitFor(downtime)
		s.spawn(i)
		s.waitBalanced(old, 120*time.Second)
		waitFor(*flagSettle)
	}
	end := time.Now()
	stopTraffic()
	s.waitDrained(60 * time.Second)
	for i := range members {
		s.close(s.current(i))
	}
	return s.figures(start, end)
}

// spawn starts slot i's member process.
func (s *scenario) spawn(i int) {
	t := s.t
	m := &member{slot: i, done: make(chan struct{}), name: "m" + strconv.Itoa(i)}
	grace := "0"
	s.mu.Lock()
	inc := len(s.all)
	s.mu.Unlock()
	switch s.kind {
	case "static":
		grace = (10 * time.Second).String() // the default Membership.LeaseTTL
	case "dynamic":
		m.name += "-" + strconv.Itoa(inc) // a new name in every process, as a generated one
	}
	m.ledger = filepath.Join(s.dir, fmt.Sprintf("m%d.%d.ledger", i, inc))
	log, err := os.Create(m.ledger + ".log")
	require.NoError(t, err)
	m.cmd = exec.Command(os.Args[0], "-test.run=^$")
	m.cmd.Env = append(os.Environ(), envRole+"=member", envAddr+"="+s.addr, envTopic+"="+s.topic,
		envName+"="+m.name, envGrace+"="+grace, envLedger+"="+m.ledger)
	m.cmd.Stdout, m.cmd.Stderr = log, log
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	m.stdin, err = m.cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, m.cmd.Start())
	go func() {
		_ = m.cmd.Wait()
		_ = log.Close()
		close(m.done)
	}()
	t.Cleanup(func() {
		_ = m.cmd.Process.Kill()
		<-m.done
	})
	s.mu.Lock()
	s.procs[i] = m
	s.all = append(s.all, m)
	s.mu.Unlock()
}

func (s *scenario) current(i int) *member {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.procs[i]
}

// stop ends m as the scenario says: Close, or SIGKILL.
func (s *scenario) stop(m *member) {
	m.stopped = time.Now()
	if s.mode == "kill" {
		require.NoError(s.t, m.cmd.Process.Signal(syscall.SIGKILL))
	} else {
		_, err := io.WriteString(m.stdin, "close\n")
		require.NoError(s.t, err)
	}
	select {
	case <-m.done:
	case <-time.After(30 * time.Second):
		s.t.Fatalf("member %d did not stop", m.slot)
	}
}

func (s *scenario) close(m *member) {
	_, _ = io.WriteString(m.stdin, "close\n")
	select {
	case <-m.done:
	case <-time.After(30 * time.Second):
		s.t.Fatalf("member %d did not close", m.slot)
	}
}

// waitBalanced waits until three members hold four partitions each, none with a lease the
// stopped process old took.
func (s *scenario) waitBalanced(old *member, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		tokens := s.leases.current()
		count := map[string]int{}
		stale := false
		for _, tok := range tokens {
			if tok == "" {
				continue
			}
			count[membership.TokenMember(tok)]++
			stale = stale || old != nil && membership.TokenMember(tok) == old.name && s.leases.firstSeen(tok).Before(old.stopped)
		}
		ok := len(count) == members && !stale
		for _, n := range count {
			ok = ok && n == partitions/members
		}
		if ok {
			return
		}
		waitFor(10 * time.Millisecond)
	}
	s.t.Fatalf("%s/%s: the group did not settle: %v", s.kind, s.mode, s.leases.current())
}

// traffic publishes rate messages a second over keysN keys (keysN/partitions per partition)
// in batches every 10ms until the returned stop is called.
func (s *scenario) traffic() (stop func()) {
	ks := spreadKeys(keysN, partitions)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		per := max(*flagRate/100, 1)
		for n := 0; ; {
			msgs := make([]*message.Message, per)
			for i := range msgs {
				msgs[i] = message.NewMessage(watermill.NewUUID(), []byte("x"))
				msgs[i].Metadata.Set(streamq.PartitionKeyMetadata, ks[n%len(ks)])
				n++
			}
			if err := s.pub.Publish(s.topic, msgs...); err != nil {
				s.t.Errorf("publish: %v", err)
				return
			}
			s.mu.Lock()
			for _, m := range msgs {
				s.published = append(s.published, m.UUID)
			}
			s.mu.Unlock()
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// spreadKeys returns n keys that HashPartitioner spreads evenly over p partitions.
func spreadKeys(n, p int) []string {
	per := make([]int, p)
	var out []string
	for i := 0; len(out) < n; i++ {
		k := "key-" + strconv.Itoa(i)
		if q := (streamq.HashPartitioner{}).Partition(k, p); per[q] < n/p {
			per[q]++
			out = append(out, k)
		}
	}
	return out
}

// waitDrained waits until every message published was delivered and nothing is pending.
func (s *scenario) waitDrained(timeout time.Duration) {
	space := keys.New("", "")
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		var pending int64
		for p := 0; p < partitions; p++ {
			x, err := s.client.XPending(context.Background(), space.PartitionStream(s.topic, p), group).Result()
			if err == nil {
				pending += x.Count
			}
		}
		if pending == 0 && s.missing() == 0 {
			return
		}
		waitFor(100 * time.Millisecond)
	}
	s.t.Fatalf("%s/%s: not drained: %d messages never delivered", s.kind, s.mode, s.missing())
}

func waitFor(d time.Duration) { <-time.After(d) }
