package consume

import (
	"errors"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/position"
)

// loadPayload puts an offloaded payload back into e before it is decoded. A missing
// payload sends the entry to the DLQ (false: settled); a Redis error is retried every
// retryEvery until the partition stops (false).
func (s *settler) loadPayload(e *position.Entry, retryEvery time.Duration) bool {
	ref := payload.Ref(e.Values)
	if ref == "" || !s.d.rules.ownEntries {
		return true
	}
	for {
		ctx, cancel := s.stepCtx()
		data, err := s.store.LoadPayload(ctx, ref)
		cancel()
		switch {
		case err == nil:
			e.Values = payload.Inline(e.Values, codec.PayloadField, data)
			return true
		case errors.Is(err, payload.ErrMissing):
			s.payloadMissing(*e, ref)
			return false
		}
		s.d.log.Error("Could not load offloaded payload, retrying", err, watermill.LogFields{"stream_id": e.ID})
		if s.pause(retryEvery) {
			return false
		}
	}
}
