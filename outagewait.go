package streamq

import (
	"errors"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/outage"
)

// A partition waiting out a downstream outage: the handler goroutine that holds the failed
// message waits here, and reports the outage to the log, the metrics and the record admin
// reads (docs/pipelines.md).

// OutageReporter is implemented by a MetricsCollector that shows partitions waiting out a
// downstream outage (package metrics/prometheus does). A partition's lease holder calls
// Outage with the partition's labels when an outage starts and after each failed probe, and
// with a zero PartitionOutage (zero Since) when the partition resumes. Optional.
type OutageReporter interface {
	Outage(l Labels, o PartitionOutage)
}

// waitOutage holds a message whose delivery failed for an outage: the outage's probe waits
// its backoff, another message waits for the outage to end. probe is whether this delivery
// was the probe, and is set for the next one. done means the worker stopped first: the
// entry stays pending for the next owner.
func (w *worker) waitOutage(reason string, probe *bool) (done bool) {
	t := w.outage.hold(w.d.clock.Now(), reason, *probe)
	*probe = t.probe
	if !t.probe {
		select {
		case <-t.ended:
			return w.isStopping()
		case <-w.stop:
			return true
		}
	}
	w.outageChanged(t.first, t.wait)
	return w.pause(t.wait)
}

// settledRun counts a delivery that was no outage failure, and reports an outage it ended.
func (w *worker) settledRun(failed bool) {
	was := w.outage.settled(failed)
	if was.Since.IsZero() {
		return
	}
	lasted := w.d.clock.Now().Sub(was.Since)
	w.d.log.Info("Downstream recovered: partition resumed", watermill.LogFields{
		"outage": lasted.Round(time.Millisecond).String(), "probes": was.Probes})
	w.reportOutage(PartitionOutage{Topic: was.Topic, Partition: was.Partition}) // zero Since: resumed
	ctx, cancel := w.settle.stepCtx()
	defer cancel()
	if err := outage.Clear(ctx, w.d.rdb, w.d.keys.Outage); err != nil {
		w.d.log.Debug("Could not clear the outage record", watermill.LogFields{"err": err.Error()})
	}
}

// outageChanged reports an outage that started (first) or whose probe failed; the record
// lives past the next probe, so an outage whose holder is gone disappears on its own.
func (w *worker) outageChanged(first bool, wait time.Duration) {
	o := w.outage.snapshot()
	if first {
		w.d.log.Error("Downstream outage: partition paused, its message is delivered again as a probe",
			errors.New(o.Reason), watermill.LogFields{"next_probe_in": wait.String()})
	} else {
		w.d.log.Debug("Outage probe failed", watermill.LogFields{"probes": o.Probes, "next_probe_in": wait.String()})
	}
	w.reportOutage(o)
	ctx, cancel := w.settle.stepCtx()
	defer cancel()
	rec := outage.Record{Member: w.d.member, Since: o.Since, NextProbe: o.NextProbe, Probes: o.Probes, Reason: o.Reason}
	if err := outage.Write(ctx, w.d.rdb, w.d.keys.Outage, rec, 2*wait+outageRecordSlack); err != nil {
		w.d.log.Debug("Could not write the outage record", watermill.LogFields{"err": err.Error()})
	}
}

// outageRecordSlack is how long an outage record outlives its next probe.
const outageRecordSlack = 10 * time.Second

func (w *worker) reportOutage(o PartitionOutage) {
	if r, ok := w.d.count.metrics.(OutageReporter); ok {
		r.Outage(w.d.count.labels, o)
	}
}

// outages are the subscription's partitions waiting out an outage.
func (sub *subscription) outages() []PartitionOutage {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	var out []PartitionOutage
	for _, w := range sub.workers {
		if o := w.outage.snapshot(); !o.Since.IsZero() {
			out = append(out, o)
		}
	}
	return out
}
