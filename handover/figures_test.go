//go:build handover

package handover

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/lease"
	membership "github.com/streamq-dev/streamq/internal/member"
)

// leaseLog reads every lease of the topic every 5ms and keeps each change.
type leaseLog struct {
	mu      sync.Mutex
	changes [][]tokenAt // per partition
	seen    map[string]time.Time
	quit    chan struct{}
	done    chan struct{}
}

type tokenAt struct {
	at    time.Time
	token string
}

func startLeaseLog(client redis.UniversalClient, topic string, n int) *leaseLog {
	l := &leaseLog{changes: make([][]tokenAt, n), seen: map[string]time.Time{}, quit: make(chan struct{}), done: make(chan struct{})}
	space := keys.New("", "")
	leaseKeys := make([]string, n)
	for p := range leaseKeys {
		leaseKeys[p] = space.Lease(topic, p, group)
	}
	go func() {
		defer close(l.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if tokens, err := lease.Owners(context.Background(), client, leaseKeys); err == nil {
				l.observe(time.Now(), tokens)
			}
			select {
			case <-l.quit:
				return
			case <-tick.C:
			}
		}
	}()
	return l
}

func (l *leaseLog) observe(now time.Time, tokens []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p, tok := range tokens {
		if h := l.changes[p]; len(h) == 0 || h[len(h)-1].token != tok {
			l.changes[p] = append(h, tokenAt{now, tok})
		}
		if _, ok := l.seen[tok]; !ok {
			l.seen[tok] = now
		}
	}
}

func (l *leaseLog) stop() {
	close(l.quit)
	<-l.done
}

func (l *leaseLog) current() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.changes))
	for p, h := range l.changes {
		if len(h) > 0 {
			out[p] = h[len(h)-1].token
		}
	}
	return out
}

// firstSeen is when tok was first read on some partition.
func (l *leaseLog) firstSeen(tok string) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[tok]
}

// ownerChanges is how often partition p went to a member of another name within
// [from, to] (a free lease in between does not count; the same name in a new process is
// not a change).
func (l *leaseLog) ownerChanges(p int, from, to time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	last, n := "", 0
	for _, c := range l.changes[p] {
		name := membership.TokenMember(c.token)
		if c.token == "" || c.at.After(to) {
			continue
		}
		if c.at.After(from) && last != "" && name != last {
			n++
		}
		last = name
	}
	return n
}

// delivery is one line of a member's ledger.
type delivery struct {
	at   time.Time
	part int
	uuid string
}

func readLedger(path string) ([]delivery, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []delivery
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			continue // a line cut by a kill
		}
		ns, err1 := strconv.ParseInt(fields[0], 10, 64)
		p, err2 := strconv.Atoi(fields[1])
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, delivery{time.Unix(0, ns), p, fields[2]})
	}
	return out, sc.Err()
}

// figures are one scenario's results.
type figures struct {
	kind, mode string
	downtime   time.Duration
	gaps       []time.Duration // per partition: the longest time without a new message delivered
	changes    []int           // per partition: owner changes
	twice      int             // messages delivered more than once
	extra      int             // deliveries beyond the first
	delivered  int
	window     time.Duration
}

func (s *scenario) figures(from, to time.Time) figures {
	f := figures{kind: s.kind, mode: s.mode, downtime: s.downtime, gaps: make([]time.Duration, partitions), changes: make([]int, partitions), window: to.Sub(from)}
	var all []delivery
	s.mu.Lock()
	procs := append([]*member(nil), s.all...)
	s.mu.Unlock()
	for _, m := range procs {
		d, err := readLedger(m.ledger)
		if err != nil {
			s.t.Fatalf("ledger %s: %v", m.ledger, err)
		}
		all = append(all, d...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].at.Before(all[j].at) })
	count := map[string]int{}
	last := make([]time.Time, partitions)
	for p := range last {
		last[p] = from
	}
	for _, d := range all {
		count[d.uuid]++
		if count[d.uuid] > 1 || d.at.Before(from) || d.at.After(to) {
			continue
		}
		f.gaps[d.part] = max(f.gaps[d.part], d.at.Sub(last[d.part]))
		last[d.part] = d.at
	}
	for p := range last {
		f.gaps[p] = max(f.gaps[p], to.Sub(last[p]))
		f.changes[p] = s.leases.ownerChanges(p, from, to)
	}
	for _, n := range count {
		f.delivered++
		if n > 1 {
			f.twice++
			f.extra += n - 1
		}
	}
	return f
}

// missing is how many published messages no ledger holds yet.
func (s *scenario) missing() int {
	s.mu.Lock()
	procs := append([]*member(nil), s.all...)
	published := append([]string(nil), s.published...)
	s.mu.Unlock()
	seen := map[string]bool{}
	for _, m := range procs {
		d, _ := readLedger(m.ledger)
		for _, x := range d {
			seen[x.uuid] = true
		}
	}
	n := 0
	for _, u := range published {
		if !seen[u] {
			n++
		}
	}
	return n
}

func (f figures) sum() (worst, median time.Duration, moved, changes int) {
	gaps := slices.Clone(f.gaps)
	slices.Sort(gaps)
	for _, c := range f.changes {
		changes += c
		if c > 0 {
			moved++
		}
	}
	return gaps[len(gaps)-1], gaps[len(gaps)/2], moved, changes
}

func (f figures) detail() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s / %s, down %s, over %s: %d messages delivered, %d delivered more than once (%d extra deliveries)\n",
		f.kind, f.mode, f.downtime, f.window.Round(time.Millisecond), f.delivered, f.twice, f.extra)
	for p := range f.gaps {
		fmt.Fprintf(&b, "  partition %2d: longest gap %7s, owner changes %d\n", p, f.gaps[p].Round(time.Millisecond), f.changes[p])
	}
	return b.String()
}

var kindNames = map[string]string{
	"static":  "static (`StaticMemberGrace` 10s)",
	"dynamic": "dynamic (a new name per process)",
	"named":   "stable names, not static",
}

// table is the Markdown table of every scenario.
func table(rows []figures) string {
	var b strings.Builder
	b.WriteString("| membership | stop | down for | longest gap, worst partition | longest gap, median partition | partitions that changed owner | owner changes | messages delivered twice |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, f := range rows {
		worst, median, moved, changes := f.sum()
		mode := map[string]string{"graceful": "`Close`", "kill": "`kill -9`"}[f.mode]
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d of %d | %d | %d |\n", kindNames[f.kind], mode, seconds(f.downtime),
			seconds(worst), seconds(median), moved, partitions, changes, f.twice)
	}
	return b.String()
}

func seconds(d time.Duration) string {
	if d < time.Second {
		return strconv.Itoa(int(d.Milliseconds())) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}
