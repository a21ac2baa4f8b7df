package retry

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamq-dev/streamq/internal/run"
)

// Outage is one partition's failures in a row and, when they are an outage, the outage:
// since when, how many probes failed, when the next one goes. It is a state machine without
// I/O; the worker reports its changes (log, metrics, the record admin reads).
//
// While an outage lasts its gate is closed, so the delivery loop hands out nothing more.
// The first message held for it is the probe: delivered again after each backoff. Other
// messages that failed meanwhile (MaxInFlightPerPartition > 1, OrderByKey) wait for the
// outage to end, then are delivered again at once. Any delivery that is not an outage
// failure (an ack, or the message's own failure) ends the outage.
//
// Every delivery reads and counts the run; that path takes no lock unless an outage lasts.
type Outage struct {
	cfg       OutageConfig
	topic     string // what Stats and the metrics name
	partition int
	gate      *run.Gate // closed while the outage lasts

	inARow atomic.Int64 // failures in a row, this one not counted
	active atomic.Bool  // an outage lasts: since is set

	mu      sync.Mutex
	since   time.Time
	probes  int
	next    time.Time
	reason  string
	probing bool          // a held message is the probe
	ended   chan struct{} // closed when the outage ends

	carried  State       // an outage a previous owner recorded (Carry), not yet continued or ended
	carrying atomic.Bool // carried is set
}

// NewOutage is the outage state of partition of topic, with no failure yet.
func NewOutage(cfg OutageConfig, topic string, partition int) *Outage {
	return &Outage{cfg: cfg, topic: topic, partition: partition, gate: run.NewGate()}
}

// Gate is closed while an outage lasts: the partition's delivery loop waits at it.
func (o *Outage) Gate() *run.Gate { return o.gate }

// Run is what Decide needs of the partition's failures.
func (o *Outage) Run() Run { return Run{InARow: int(o.inARow.Load())} }

// Turn is what a message held for an outage does next: wait before its probe, or wait
// for the outage to end (ended).
type Turn struct {
	Probe bool
	Wait  time.Duration
	Ended <-chan struct{}
	First bool // this failure started the outage
}

// Hold counts a failure for an outage at now with reason; wasProbe is true when the failed
// delivery was the probe.
func (o *Outage) Hold(now time.Time, reason string, wasProbe bool) Turn {
	o.inARow.Add(1)
	o.mu.Lock()
	defer o.mu.Unlock()
	var t Turn
	if o.since.IsZero() {
		o.since, o.probes, o.probing, o.ended = now, 0, false, make(chan struct{})
		if o.carrying.Swap(false) { // the outage a previous owner was waiting out goes on
			o.since, o.probes, o.carried = o.carried.Since, o.carried.Probes, State{}
		}
		o.active.Store(true)
		o.gate.Set(true, now)
		t.First = true
	}
	o.reason = reason
	switch {
	case wasProbe:
		o.probes++
	case o.probing:
		return Turn{Ended: o.ended, First: t.First}
	default:
		o.probing = true
	}
	t.Probe, t.Wait = true, o.cfg.wait(o.probes)
	o.next = now.Add(t.Wait)
	return t
}

// Settled counts a delivery that was no outage failure: an ack resets the run, any other
// failure extends it; either ends an outage. It returns the outage that ended (zero Since:
// none).
func (o *Outage) Settled(failed bool) State {
	switch {
	case failed:
		o.inARow.Add(1)
	case o.inARow.Load() != 0:
		o.inARow.Store(0)
	}
	if !o.active.Load() && !o.carrying.Load() {
		return State{}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.carrying.Swap(false) { // the outage a previous owner recorded is over
		was := o.carried
		o.carried = State{}
		return was
	}
	if o.since.IsZero() { // another delivery ended it meanwhile
		return State{}
	}
	was := o.snapshotLocked()
	o.since, o.next, o.probes, o.probing, o.reason = time.Time{}, time.Time{}, 0, false, ""
	o.active.Store(false)
	close(o.ended)
	o.gate.Set(false, time.Time{})
	return was
}

// Carry takes over the outage a previous owner of the partition recorded and did not see
// end (it crashed, or lost its lease): st's Since, Probes and Reason. Nothing is paused: the
// next delivery tells. A failure for an outage continues it (its Since kept, the backoff
// going on from its probes); any other settled delivery ends it, and Settled returns it so
// the owner reports the recovery and clears the record. Snapshot does not show it before.
func (o *Outage) Carry(st State) {
	if st.Since.IsZero() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.since.IsZero() {
		return // an outage of this owner's own already lasts
	}
	st.Topic, st.Partition = o.topic, o.partition
	o.carried = st
	o.carrying.Store(true)
}

// Snapshot is the outage now (zero Since: none).
func (o *Outage) Snapshot() State {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.snapshotLocked()
}

func (o *Outage) snapshotLocked() State {
	if o.since.IsZero() {
		return State{}
	}
	return State{Topic: o.topic, Partition: o.partition, Since: o.since, NextProbe: o.next, Probes: o.probes, Reason: o.reason}
}

// State is one partition's outage as Stats and the metrics show it: zero Since when there is
// none.
type State struct {
	Topic     string
	Partition int
	Since     time.Time
	NextProbe time.Time
	Probes    int
	Reason    string
}
