//go:build soak

package soak

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// Kinds of ledger events.
const (
	evPublished = "pub"     // Publish returned nil for this message
	evPubFailed = "pubfail" // Publish returned an error: the message may or may not exist; it is sent again
	evHandled   = "handle"  // a handler got the message (written before it returns)
	evAcquired  = "acq"     // the consumer took a partition's lease
	evReleased  = "rel"     // the consumer released or lost a partition
	evLost      = "lost"    // the consumer's lease of a partition was lost
	evHealed    = "heal"    // the consumer recreated its group on a partition (id: where)
	evStart     = "start"   // the process started
	evEnd       = "end"     // the process finished cleanly (after Close)
)

// Handler results.
const (
	resAck  = "ack"
	resNack = "nack"
	resDLQ  = "dlq"
)

// event is one line of a process's ledger.
type event struct {
	Ev    string `json:"ev"`
	T     int64  `json:"t"` // wall clock, unix ns: one clock for every process of the machine
	Proc  string `json:"proc,omitempty"`
	Group string `json:"g,omitempty"`
	UUID  string `json:"u,omitempty"`
	Key   string `json:"k,omitempty"`
	Seq   int64  `json:"s,omitempty"`
	Part  int    `json:"p"`
	Size  int    `json:"sz,omitempty"`
	Sum   string `json:"sum,omitempty"`
	Retry int    `json:"rc,omitempty"`
	Count int64  `json:"dc,omitempty"`
	ID    string `json:"id,omitempty"`
	Res   string `json:"r,omitempty"`
	Bad   string `json:"bad,omitempty"` // why the payload check failed
	RGrp  string `json:"rg,omitempty"`  // x-retry-group of the delivered message
	Err   string `json:"err,omitempty"`
	Full  bool   `json:"full,omitempty"` // a Publish refused because Redis was at maxmemory
	// BareOOM: that refusal was Redis's OOM reply, not wrapped in streamq.ErrRedisFull.
	BareOOM bool `json:"bareoom,omitempty"`
	Pid     int  `json:"pid,omitempty"`
}

func (e event) time() time.Time { return time.Unix(0, e.T) }

// ledger appends events to a file with one write per event, so an event is in the kernel's
// hands before the process acts on it and survives a kill -9 of the process.
type ledger struct {
	mu   sync.Mutex
	f    *os.File
	proc string
}

func openLedger(path, proc string) (*ledger, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	return &ledger{f: f, proc: proc}, nil
}

func (l *ledger) write(e event) {
	if e.T == 0 {
		e.T = time.Now().UnixNano()
	}
	e.Proc = l.proc
	line, err := json.Marshal(e)
	if err != nil {
		panic(fmt.Sprintf("soak: marshal ledger event: %v", err))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(append(line, '\n')); err != nil {
		panic(fmt.Sprintf("soak: write ledger: %v", err))
	}
}

func (l *ledger) close() error { return l.f.Close() }

// readLedgers reads every *.jsonl file of dir, all events sorted by time. A torn last line
// (a process killed in the middle of a write) is counted, not fatal.
func readLedgers(dir string) ([]event, int, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, 0, fmt.Errorf("list ledgers: %w", err)
	}
	var all []event
	torn := 0
	for _, p := range paths {
		events, bad, err := readLedger(p)
		if err != nil {
			return nil, 0, err
		}
		all = append(all, events...)
		torn += bad
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].T < all[j].T })
	return all, torn, nil
}

func readLedger(path string) ([]event, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("open ledger: %w", err)
	}
	defer f.Close()
	var out []event
	bad := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			bad++
			continue
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, 0, fmt.Errorf("read ledger %s: %w", path, err)
	}
	return out, bad, nil
}
