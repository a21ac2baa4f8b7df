package admin

import (
	"context"
	"time"

	"github.com/streamq-dev/streamq/internal/inspect"
	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// TrimEstimate is about how many entries TrimByAge would remove, for a progress total.
type TrimEstimate struct {
	// Entries is the estimate: exact for a partition whose entries are all older than the
	// cutoff, or none; in between, its length times the share of its id-time span before the
	// cutoff (entries spread evenly in time).
	Entries int64
	// Exact: every partition was all or nothing, so Entries is what TrimByAge removes unless
	// the topic changes meanwhile.
	Exact bool
}

// EstimateTrimByAge estimates how many entries of topic TrimByAge(ctx, topic, age) would
// remove, from one pipeline (the server's clock and XINFO STREAM of every partition): it
// reads no entry.
func (a *Admin) EstimateTrimByAge(ctx context.Context, topic string, age time.Duration) (TrimEstimate, error) {
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return TrimEstimate{}, err
	}
	now, infos, err := inspect.Counters(ctx, a.rdb, streams(a.space.PartitionStream, topic, 0, n))
	if err != nil {
		return TrimEstimate{}, err
	}
	cutoff := streamid.Time(streamid.Min(now.Add(-age)))
	est := TrimEstimate{Exact: true}
	for _, info := range infos {
		c, exact := olderIn(info, cutoff)
		est.Entries += c
		est.Exact = est.Exact && exact
	}
	return est, nil
}

// olderIn estimates the entries of a partition older than cutoff (see TrimEstimate).
func olderIn(info *stream.Info, cutoff time.Time) (int64, bool) {
	if info == nil || info.Length == 0 {
		return 0, true
	}
	first, last := streamid.Time(info.FirstID), streamid.Time(info.LastID)
	switch {
	case !first.Before(cutoff):
		return 0, true
	case last.Before(cutoff):
		return info.Length, true
	}
	span := last.Sub(first)
	if span <= 0 {
		return info.Length, false
	}
	return int64(float64(info.Length) * float64(cutoff.Sub(first)) / float64(span)), false
}
