package admin

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/importsrc"
	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// backlogEntry is one entry of a source group's backlog.
type backlogEntry struct {
	id     string
	values map[string]any // nil: gone from the stream
	// pending: delivered to the group and not acked; own: pending under the import's
	// consumer (taken by an earlier SourceAck run that did not ack it).
	pending, own bool
}

// backlog reads a source group's backlog in stream order, batch by batch: first its pending
// entries up to its last-delivered id when the import started, then the entries after it up
// to the stream's newest entry then. When take, it takes them as the import's consumer
// (claims the pending ones, reads the others through the group); else it only reads.
type backlog struct {
	rdb      redis.UniversalClient
	src      string
	group    string
	consumer string
	count    int64
	take     bool
	snap     importsrc.Snapshot

	undelivered bool   // the pending entries are done
	cursor      string // the last id read in the current phase ("" none yet)
	done        bool
}

func newBacklog(rdb redis.UniversalClient, o ImportOptions, snap importsrc.Snapshot, take bool) *backlog {
	return &backlog{rdb: rdb, src: o.Stream, group: o.Group, consumer: o.Consumer, count: int64(o.BatchSize),
		take: take, snap: snap}
}

// next returns the next batch, empty at the end.
func (b *backlog) next(ctx context.Context) ([]backlogEntry, error) {
	if !b.undelivered {
		batch, err := b.pending(ctx)
		if err != nil || len(batch) > 0 {
			return batch, err
		}
		b.undelivered, b.cursor = true, b.snap.LastDelivered
	}
	if b.done || b.snap.End == "" || !streamid.Less(b.cursor, b.snap.End) {
		return nil, nil
	}
	var es []stream.Entry
	var err error
	if b.take {
		es, err = importsrc.ReadNew(ctx, b.rdb, b.src, b.group, b.consumer, b.count)
	} else {
		es, err = importsrc.After(ctx, b.rdb, b.src, b.cursor, b.snap.End, b.count)
	}
	if err != nil || len(es) == 0 {
		b.done = true
		return nil, err
	}
	b.cursor = es[len(es)-1].ID
	return toBacklog(es, nil, ""), nil
}

// pending returns the next page of pending entries with their bodies.
func (b *backlog) pending(ctx context.Context) ([]backlogEntry, error) {
	page, err := importsrc.PendingPage(ctx, b.rdb, b.src, b.group, importsrc.Page{After: b.cursor, UpTo: b.snap.LastDelivered, Count: b.count})
	if err != nil || len(page) == 0 {
		return nil, err
	}
	b.cursor = page[len(page)-1].ID
	ids := make([]string, len(page))
	for i, p := range page {
		ids[i] = p.ID
	}
	var es []stream.Entry
	if b.take {
		es, err = importsrc.Claim(ctx, b.rdb, b.src, b.group, b.consumer, ids)
	} else {
		es, err = importsrc.Bodies(ctx, b.rdb, b.src, ids)
	}
	if err != nil {
		return nil, err
	}
	return toBacklog(es, page, b.consumer), nil
}

// toBacklog turns entries into backlog entries; page, when given, is their pending
// entries, in the same order.
func toBacklog(es []stream.Entry, page []stream.Pending, consumer string) []backlogEntry {
	out := make([]backlogEntry, len(es))
	for i, e := range es {
		out[i] = backlogEntry{id: e.ID, values: e.Values}
		if page != nil {
			out[i].pending, out[i].own = true, page[i].Consumer == consumer
		}
	}
	return out
}
