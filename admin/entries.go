package admin

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/payload"
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
	cmds := make([]*redis.XMessageSliceCmd, parts)
	_, _ = a.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for p := range cmds {
			cmds[p] = pipe.XRevRangeN(ctx, a.space.PartitionStream(topic, p), "+", "-", int64(n))
		}
		return nil
	})
	var all []Entry
	for p, c := range cmds {
		if err := c.Err(); err != nil {
			return nil, fmt.Errorf("read %q partition %d: %w", topic, p, err)
		}
		all = append(all, toEntries(topic, p, c.Val())...)
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
// start and end inclusive ("" means "-" and "+"; "(id" excludes id), oldest first, or newest
// first when reverse (XREVRANGE end start). A partition out of range or a bad id is
// ErrInvalidArgument.
func (a *Admin) Range(ctx context.Context, topic string, partition int, start, end string, count int64, reverse bool) ([]Entry, error) {
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
	stream := a.space.PartitionStream(topic, partition)
	cmd := a.rdb.XRangeN(ctx, stream, start, end, count)
	if reverse {
		cmd = a.rdb.XRevRangeN(ctx, stream, end, start, count)
	}
	if err := cmd.Err(); err != nil {
		if invalidID(err) {
			return nil, fmt.Errorf("%w: range %q..%q: %w", ErrInvalidArgument, start, end, err)
		}
		return nil, fmt.Errorf("read %s: %w", stream, err)
	}
	return toEntries(topic, partition, cmd.Val()), nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func toEntries(topic string, p int, msgs []redis.XMessage) []Entry {
	out := make([]Entry, len(msgs))
	for i, m := range msgs {
		out[i] = toEntry(topic, p, m)
	}
	return out
}

// DecodeEntry decodes an entry of partition p of topic as read from its stream (XRANGE,
// XREAD): what ListRecent and Range return, for tools that read streams themselves.
func DecodeEntry(topic string, p int, m redis.XMessage) Entry { return toEntry(topic, p, m) }

func toEntry(topic string, p int, m redis.XMessage) Entry {
	e := Entry{Topic: topic, Partition: p, ID: m.ID, Time: streamid.Time(m.ID), Fields: map[string]string{}}
	uuid, md, body, err := codec.Decode(m.Values)
	if err != nil {
		e.Malformed = err.Error()
		uuid, _ = m.Values[codec.UUIDField].(string)
		body, _ = m.Values[codec.PayloadField].(string)
	}
	e.UUID, e.Metadata, e.Payload, e.PayloadSize = uuid, md, []byte(body), len(body)
	for k, v := range m.Values {
		if k != codec.UUIDField && k != codec.MetadataField && k != codec.PayloadField {
			e.Fields[k], _ = v.(string)
		}
	}
	if ref := payload.Ref(m.Values); ref != "" {
		e.Offloaded, e.Payload = true, nil
		e.PayloadSize, _ = strconv.Atoi(e.Fields[payload.FieldOriginalSize])
	}
	return e
}
