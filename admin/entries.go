package admin

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// DefaultListLimit is how many entries ListRecent and Range return when given no count.
const DefaultListLimit = 100

// Entry is one stream entry of a partition, decoded from the default format.
type Entry struct {
	Topic     string
	Partition int
	ID        string
	Time      time.Time // the id's time
	UUID      string
	Metadata  map[string]string
	// Payload is the inline payload; empty when Offloaded (it is not loaded).
	Payload []byte
	// Offloaded: the payload lives in its own key (x-payload-hash-ref).
	Offloaded bool
	// PayloadSize is the payload's size: x-payload-original-size when offloaded.
	PayloadSize int
	// Fields holds the entry's fields other than the default format's three (UUID, metadata,
	// payload), e.g. the offload reference.
	Fields map[string]string
	// Malformed is the decode error of an entry not in the default format ("" when fine).
	Malformed string
}

// ListRecent returns the n newest entries of topic across partitions, newest first
// (XREVRANGE + - COUNT n per partition in one pipeline, merged by id). n <= 0 means
// DefaultListLimit.
func (a *Admin) ListRecent(ctx context.Context, topic string, n int) ([]Entry, error) {
	parts, err := a.partitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		n = DefaultListLimit
	}
	newest, err := stream.Newest(ctx, a.rdb, streams(a.space.PartitionStream, topic, 0, parts), int64(n))
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", topic, err)
	}
	var all []Entry
	for p, es := range newest {
		all = append(all, toEntries(topic, p, es)...)
	}
	sort.SliceStable(all, func(i, j int) bool { return newer(all[i], all[j]) })
	return all[:min(len(all), n)], nil
}

func newer(x, y Entry) bool {
	if x.ID != y.ID {
		return streamid.Less(y.ID, x.ID)
	}
	return x.Partition < y.Partition
}

// Range reads up to count entries (count <= 0: DefaultListLimit) of one partition between
// start and end inclusive ("" means "-" and "+"; "(id" excludes id), oldest first (XRANGE).
// A partition out of range or a bad id is ErrInvalidArgument.
func (a *Admin) Range(ctx context.Context, topic string, partition int, start, end string, count int64) ([]Entry, error) {
	return a.readRange(ctx, topic, partition, idRange{start: start, end: end, count: count})
}

// RevRange is Range newest first (XREVRANGE end start).
func (a *Admin) RevRange(ctx context.Context, topic string, partition int, start, end string, count int64) ([]Entry, error) {
	return a.readRange(ctx, topic, partition, idRange{start: start, end: end, count: count, reverse: true})
}

// idRange is what Range and RevRange read of a partition.
type idRange struct {
	start, end string
	count      int64
	reverse    bool
}

func (a *Admin) readRange(ctx context.Context, topic string, partition int, r idRange) ([]Entry, error) {
	start, end, count := r.start, r.end, r.count
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	if err := a.checkPartition(topic, partition, n); err != nil {
		return nil, err
	}
	start, end, count = orDefault(start, "-"), orDefault(end, "+"), max(count, 0)
	if count == 0 {
		count = DefaultListLimit
	}
	key := a.space.PartitionStream(topic, partition)
	es, err := stream.Range(ctx, a.rdb, key, start, end, count)
	if r.reverse {
		es, err = stream.RevRange(ctx, a.rdb, key, end, start, count)
	}
	if errors.Is(err, stream.ErrInvalidID) {
		return nil, fmt.Errorf("%w: range %q..%q: %w", ErrInvalidArgument, start, end, err)
	}
	if err != nil {
		return nil, err
	}
	return toEntries(topic, partition, es), nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func toEntries(topic string, p int, es []stream.Entry) []Entry {
	out := make([]Entry, len(es))
	for i, e := range es {
		out[i] = toEntry(topic, p, e.ID, e.Values)
	}
	return out
}

func toEntry(topic string, p int, id string, values map[string]any) Entry {
	e := Entry{Topic: topic, Partition: p, ID: id, Time: streamid.Time(id), Fields: map[string]string{}}
	uuid, md, body, err := codec.Decode(values)
	if err != nil {
		e.Malformed = err.Error()
		uuid, _ = values[codec.UUIDField].(string)
		body, _ = values[codec.PayloadField].(string)
	}
	e.UUID, e.Metadata, e.Payload, e.PayloadSize = uuid, md, []byte(body), len(body)
	for k, v := range values {
		if k != codec.UUIDField && k != codec.MetadataField && k != codec.PayloadField {
			e.Fields[k], _ = v.(string)
		}
	}
	if ref := payload.Ref(values); ref != "" {
		e.Offloaded, e.Payload = true, nil
		e.PayloadSize, _ = strconv.Atoi(e.Fields[payload.FieldOriginalSize])
	}
	return e
}
