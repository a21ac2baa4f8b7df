package dlq

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// Brief is what counting dead letters needs of one: its DLQ entry id, reason, group and
// failure time (the entry id's time when the entry has none).
type Brief struct {
	ID       string
	Reason   string
	Group    string
	FailedAt time.Time
}

// Briefs reads up to count dead letters of dlqStream from end back to start ("+", "-", ids,
// "(id" to exclude id), newest first (XREVRANGE), and keeps of each only its Brief. It only
// reads, so it works at maxmemory too. A bad id is stream.ErrInvalidID.
func Briefs(ctx context.Context, rdb redis.UniversalClient, dlqStream, end, start string, count int64) ([]Brief, error) {
	es, err := stream.RevRange(ctx, rdb, dlqStream, end, start, count)
	if err != nil {
		return nil, err
	}
	out := make([]Brief, len(es))
	for i, e := range es {
		str := func(k string) string { s, _ := e.Values[k].(string); return s }
		out[i] = Brief{ID: e.ID, Reason: str(FieldReason), Group: str(FieldGroup), FailedAt: millis(str(FieldFailedAt))}
		if ms, _, ok := streamid.Parse(e.ID); ok && out[i].FailedAt.IsZero() {
			out[i].FailedAt = time.UnixMilli(int64(ms)) //nolint:gosec // a stream id's time fits
		}
	}
	return out, nil
}
