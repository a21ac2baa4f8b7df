package streamq

import (
	"errors"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/server"
)

// Metadata set on a dead letter whose offloaded payload was gone when it was read.
const (
	PayloadMissingMetadata    = "x-payload-missing"
	PayloadMissingRefMetadata = "x-payload-missing-ref"
)

// loadPayload puts an offloaded payload back into e. A missing payload sends the entry to
// the DLQ (false: handled); a Redis error is retried until the worker stops.
func (w *worker) loadPayload(e *entry) bool {
	ref := payload.Ref(e.values)
	if ref == "" || w.sub.view.dlq {
		return true
	}
	key := w.sub.view.space.Payload(w.sub.view.topic, w.p, ref)
	for {
		ctx, cancel := w.stepCtx()
		data, err := payload.Get(ctx, w.sub.rdb, key)
		cancel()
		switch {
		case err == nil:
			values := make(map[string]any, len(e.values))
			for k, v := range e.values {
				values[k] = v
			}
			values[PayloadField] = data
			e.values = values
			return true
		case errors.Is(err, payload.ErrMissing):
			w.payloadMissing(*e, ref)
			return false
		}
		server.ReloadOnConnError(w.ctx, w.sub.rdb, err)
		w.sub.logger.Error("Could not load offloaded payload, retrying", err, watermill.LogFields{"partition": w.p, "stream_id": e.id})
		if w.pause(w.sub.cfg.RetryMoverInterval) {
			return false
		}
	}
}

// payloadMissing dead-letters an entry whose payload is gone, flagged for operators.
func (w *worker) payloadMissing(e entry, ref string) {
	w.sub.s.stats.payloadMissing.Add(1)
	w.sub.cfg.Metrics.PayloadMissing(w.labels())
	reason := "offloaded payload missing: " + ref
	uuid, md, _, err := codec.Decode(e.values)
	if err != nil {
		uuid, md = watermill.NewUUID(), map[string]string{}
	}
	md[PayloadMissingMetadata] = "true"
	md[PayloadMissingRefMetadata] = ref
	md[DeadLetterMetadata] = reason
	fields, _ := codec.Encode(uuid, md, nil)
	rec := w.record(e, reason, retryCount(md), maxRetries(md, w.sub.cfg))
	rec.OriginalMessageID = firstNonEmpty(md[OriginalIDMetadata], e.id)
	rec.Headers, rec.Message = "{}", fields
	w.writeDeadLetter(e, rec)
}
