package streamq

import (
	"errors"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/position"
	"github.com/streamq-dev/streamq/internal/server"
)

// Metadata set on a dead letter whose offloaded payload was gone when it was read.
const (
	PayloadMissingMetadata    = "x-payload-missing"
	PayloadMissingRefMetadata = "x-payload-missing-ref"
)

// loadPayload puts an offloaded payload back into e before it is decoded. A missing
// payload sends the entry to the DLQ (false: settled); a Redis error is retried every
// retryEvery until the partition stops (false).
func (s *settler) loadPayload(e *position.Entry, retryEvery time.Duration) bool {
	ref := payload.Ref(e.Values)
	if ref == "" || !s.d.rules.ownEntries {
		return true
	}
	key := s.d.keys.Payload(ref)
	for {
		ctx, cancel := s.stepCtx()
		data, err := payload.Get(ctx, s.d.rdb, key)
		cancel()
		switch {
		case err == nil:
			values := make(map[string]any, len(e.Values))
			for k, v := range e.Values {
				values[k] = v
			}
			values[PayloadField] = data
			e.Values = values
			return true
		case errors.Is(err, payload.ErrMissing):
			s.payloadMissing(*e, ref)
			return false
		}
		server.ReloadOnConnError(s.d.ctx, s.d.rdb, err)
		s.d.log.Error("Could not load offloaded payload, retrying", err, watermill.LogFields{"stream_id": e.ID})
		if s.pause(retryEvery) {
			return false
		}
	}
}
