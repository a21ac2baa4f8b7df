package consume

import (
	"errors"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/outage"
	"github.com/streamq-dev/streamq/internal/retry"
)

// A partition waiting out a downstream outage: the handler goroutine that holds the failed
// message waits here, and reports the outage to the log, the counters and the record admin
// reads (retry.Outage is the state machine).

// waitOutage holds a message whose delivery failed for an outage: the outage's probe waits
// its backoff, another message waits for the outage to end. probe is whether this delivery
// was the probe, and is set for the next one. done means the worker stopped first: the
// entry stays pending for the next owner.
func (w *worker) waitOutage(reason string, probe *bool) (done bool) {
	t := w.outage.Hold(w.d.clock.Now(), reason, *probe)
	*probe = t.Probe
	if !t.Probe {
		select {
		case <-t.Ended:
			return w.isStopping()
		case <-w.stop:
			return true
		}
	}
	w.outageChanged(t.First, t.Wait)
	return w.pause(t.Wait)
}

// settledRun counts a delivery that was no outage failure, and reports an outage it ended.
func (w *worker) settledRun(failed bool) {
	was := w.outage.Settled(failed)
	if was.Since.IsZero() {
		return
	}
	lasted := w.d.clock.Now().Sub(was.Since)
	w.d.log.Info("Downstream recovered: partition resumed", watermill.LogFields{
		"outage": lasted.Round(time.Millisecond).String(), "probes": was.Probes})
	w.d.count.Outage(Outage{Topic: was.Topic, Partition: was.Partition}) // zero Since: resumed
	ctx, cancel := w.settle.stepCtx()
	defer cancel()
	if err := w.outageStore.ClearOutage(ctx); err != nil {
		w.d.log.Debug("Could not clear the outage record", watermill.LogFields{"err": err.Error()})
	}
}

// carryOutage takes over the outage a previous owner of the partition recorded and did not
// see end (it crashed or lost its lease): this owner's first delivery continues it or ends
// it, and an end clears the record, so no stale outage outlives the recovery.
func (w *worker) carryOutage() {
	ctx, cancel := w.settle.stepCtx()
	defer cancel()
	rec, err := w.outageStore.ReadOutage(ctx)
	if err != nil || rec == nil {
		return // none, or unknown: the record expires on its own
	}
	w.outage.Carry(retry.State{Since: rec.Since, NextProbe: rec.NextProbe, Probes: rec.Probes, Reason: rec.Reason})
}

// outageChanged reports an outage that started (first) or whose probe failed; the record
// lives past the next probe, so an outage whose holder is gone disappears on its own.
func (w *worker) outageChanged(first bool, wait time.Duration) {
	o := w.outage.Snapshot()
	if first {
		w.d.log.Error("Downstream outage: partition paused, its message is delivered again as a probe",
			errors.New(o.Reason), watermill.LogFields{"next_probe_in": wait.String()})
	} else {
		w.d.log.Debug("Outage probe failed", watermill.LogFields{"probes": o.Probes, "next_probe_in": wait.String()})
	}
	w.d.count.Outage(outageOf(o))
	ctx, cancel := w.settle.stepCtx()
	defer cancel()
	rec := outage.Record{Member: w.d.member, Since: o.Since, NextProbe: o.NextProbe, Probes: o.Probes, Reason: o.Reason}
	if err := w.outageStore.WriteOutage(ctx, rec, 2*wait+outageRecordSlack); err != nil {
		w.d.log.Debug("Could not write the outage record", watermill.LogFields{"err": err.Error()})
	}
}

// outageRecordSlack is how long an outage record outlives its next probe.
const outageRecordSlack = 10 * time.Second

// outages are the subscription's partitions waiting out an outage.
func (sub *subscription) outages() []Outage {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	var out []Outage
	for _, w := range sub.workers {
		if o := w.outage.Snapshot(); !o.Since.IsZero() {
			out = append(out, outageOf(o))
		}
	}
	return out
}
