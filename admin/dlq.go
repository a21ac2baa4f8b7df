package admin

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/dlq"
)

// DeadLetter is one DLQ entry.
type DeadLetter struct {
	Topic     string
	Partition int
	ID        string // DLQ entry id (unique within the partition's DLQ)

	UUID     string
	Payload  []byte
	Metadata map[string]string

	Reason            string
	Group             string
	RetryCount        int
	MaxRetries        int
	OriginalMessageID string // first stream id of the message
	OriginalStreamID  string // stream id of the failed delivery
	Timestamp         time.Time
	FailedAt          time.Time
	Raw               string // JSON of the fields of an undecodable entry
}

// DLQTopics returns the topics whose DLQ holds entries.
func (a *Admin) DLQTopics(ctx context.Context) ([]string, error) {
	topics, err := a.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range topics {
		n, err := a.DLQSize(ctx, t)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out, nil
}

// DLQSize is the number of dead letters of topic, over all partitions.
func (a *Admin) DLQSize(ctx context.Context, topic string) (int64, error) {
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return 0, err
	}
	cmds := make([]*redis.IntCmd, n)
	_, err = a.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range cmds {
			cmds[i] = p.XLen(ctx, a.space.DLQ(topic, i))
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("DLQ size of %q: %w", topic, err)
	}
	var total int64
	for _, c := range cmds {
		total += c.Val()
	}
	return total, nil
}

// DLQEntries returns up to limit dead letters of topic, oldest first across partitions
// (limit <= 0: 100).
func (a *Admin) DLQEntries(ctx context.Context, topic string, limit int) ([]DeadLetter, error) {
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 100
	}
	var all []DeadLetter
	for p := 0; p < n; p++ {
		msgs, err := a.rdb.XRangeN(ctx, a.space.DLQ(topic, p), "-", "+", int64(limit)).Result()
		if err != nil {
			return nil, fmt.Errorf("read DLQ of %q partition %d: %w", topic, p, err)
		}
		for _, m := range msgs {
			all = append(all, toDeadLetter(topic, p, m))
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].FailedAt.Before(all[j].FailedAt) })
	if len(all) > limit {
		all = all[:limit]
	}
	return all, nil
}

// DLQEntry returns one dead letter.
func (a *Admin) DLQEntry(ctx context.Context, topic string, partition int, id string) (DeadLetter, error) {
	m, err := a.dlqMessage(ctx, topic, partition, id)
	if err != nil {
		return DeadLetter{}, err
	}
	return toDeadLetter(topic, partition, m), nil
}

func (a *Admin) dlqMessage(ctx context.Context, topic string, partition int, id string) (redis.XMessage, error) {
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return redis.XMessage{}, err
	}
	if err := a.checkPartition(topic, partition, n); err != nil {
		return redis.XMessage{}, err
	}
	msgs, err := a.rdb.XRange(ctx, a.space.DLQ(topic, partition), id, id).Result()
	if err != nil {
		if redis.HasErrorPrefix(err, "Invalid stream ID") {
			return redis.XMessage{}, fmt.Errorf("%w: %q is not a stream id", ErrInvalidArgument, id)
		}
		return redis.XMessage{}, fmt.Errorf("read dead letter %s: %w", id, err)
	}
	if len(msgs) == 0 {
		return redis.XMessage{}, fmt.Errorf("%w: dead letter %s of %q partition %d", ErrEntryNotFound, id, topic, partition)
	}
	return msgs[0], nil
}

// ReplayOptions tunes a replay.
type ReplayOptions struct {
	// Delete removes the DLQ entry once replayed. Default: keep it (the seed's behaviour).
	Delete bool
}

// ReplayDeadLetter appends dead letter id back to its original partition (with
// x-force-partition-id, x-replayed-from, the retry count reset) and returns the new stream id.
func (a *Admin) ReplayDeadLetter(ctx context.Context, topic string, partition int, id string, opts ReplayOptions) (string, error) {
	m, err := a.dlqMessage(ctx, topic, partition, id)
	if err != nil {
		return "", err
	}
	return a.replay(ctx, topic, partition, m, opts)
}

func (a *Admin) replay(ctx context.Context, topic string, partition int, m redis.XMessage, opts ReplayOptions) (string, error) {
	defer func(start time.Time) { a.metrics.DLQReplay(topic, time.Since(start)) }(time.Now())
	fields, err := dlq.ReplayFields(m.Values, m.ID)
	if err != nil {
		return "", err
	}
	target := dlq.PartitionOf(m.Values)
	if target != partition {
		return "", fmt.Errorf("%w: dead letter %s in partition %d's DLQ names partition %d", ErrInvalidArgument, m.ID, partition, target)
	}
	id, err := dlq.Replay(ctx, a.rdb, dlq.ReplayArgs{
		DLQStream: a.space.DLQ(topic, partition), Stream: a.space.PartitionStream(topic, partition),
		ID: m.ID, Delete: opts.Delete, Fields: fields,
	})
	if errors.Is(err, dlq.ErrNotFound) {
		return "", fmt.Errorf("%w: %w", ErrEntryNotFound, err)
	}
	return id, err
}

// DefaultReplayLimit bounds ReplayAll when it is given no limit.
const DefaultReplayLimit = 1000

// ReplayAll replays up to limit dead letters of topic (limit <= 0: DefaultReplayLimit),
// oldest first per partition, for which keep returns true (nil: all), and returns how many
// it replayed.
func (a *Admin) ReplayAll(ctx context.Context, topic string, limit int, keep func(DeadLetter) bool, opts ReplayOptions) (int, error) {
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return 0, err
	}
	if limit <= 0 {
		limit = DefaultReplayLimit
	}
	done := 0
	for p := 0; p < n && done < limit; p++ {
		c, err := a.replayPartition(ctx, topic, p, limit-done, keep, opts)
		done += c
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

func (a *Admin) replayPartition(ctx context.Context, topic string, p, limit int, keep func(DeadLetter) bool, opts ReplayOptions) (int, error) {
	done, start := 0, "-"
	for done < limit {
		msgs, err := a.rdb.XRangeN(ctx, a.space.DLQ(topic, p), start, "+", 100).Result()
		if err != nil || len(msgs) == 0 {
			return done, err
		}
		for _, m := range msgs {
			if done >= limit {
				break
			}
			if keep != nil && !keep(toDeadLetter(topic, p, m)) {
				continue
			}
			if _, err := a.replay(ctx, topic, p, m, opts); err != nil && !errors.Is(err, ErrEntryNotFound) {
				return done, err
			}
			done++
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
	return done, nil
}

// DeleteDeadLetter removes one dead letter; false when it did not exist.
func (a *Admin) DeleteDeadLetter(ctx context.Context, topic string, partition int, id string) (bool, error) {
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return false, err
	}
	if err := a.checkPartition(topic, partition, n); err != nil {
		return false, err
	}
	c, err := a.rdb.XDel(ctx, a.space.DLQ(topic, partition), id).Result()
	if err != nil {
		if redis.HasErrorPrefix(err, "Invalid stream ID") {
			return false, nil
		}
		return false, fmt.Errorf("delete dead letter %s: %w", id, err)
	}
	if c > 0 {
		a.metrics.DLQDeleted(topic, int(c))
	}
	return c > 0, nil
}

// ClearDLQ deletes every dead letter of topic and returns how many it deleted. The DLQ
// streams and the consumer groups reading them as a DLQTopic stay.
func (a *Admin) ClearDLQ(ctx context.Context, topic string) (int64, error) {
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return 0, err
	}
	var removed int64
	for p := 0; p < n; p++ {
		c, err := a.rdb.XTrimMaxLen(ctx, a.space.DLQ(topic, p), 0).Result()
		if err != nil {
			return removed, fmt.Errorf("clear DLQ of %q partition %d: %w", topic, p, err)
		}
		removed += c
	}
	a.metrics.DLQCleared(topic, int(removed))
	return removed, nil
}

func toDeadLetter(topic string, p int, m redis.XMessage) DeadLetter {
	str := func(k string) string { s, _ := m.Values[k].(string); return s }
	num := func(k string) int { v, _ := strconv.Atoi(str(k)); return v }
	ms := func(k string) time.Time {
		v, err := strconv.ParseInt(str(k), 10, 64)
		if err != nil || v <= 0 {
			return time.Time{}
		}
		return time.UnixMilli(v)
	}
	d := DeadLetter{
		Topic: topic, Partition: p, ID: m.ID,
		Reason: str(dlq.FieldReason), Group: str(dlq.FieldGroup),
		RetryCount: num(dlq.FieldRetryCount), MaxRetries: num(dlq.FieldMaxRetries),
		OriginalMessageID: str(dlq.FieldOriginalMessageID), OriginalStreamID: str(dlq.FieldOriginalStreamID),
		Timestamp: ms(dlq.FieldTimestamp), FailedAt: ms(dlq.FieldFailedAt), Raw: str(dlq.FieldRaw),
	}
	if uuid, md, payload, err := codec.Decode(m.Values); err == nil {
		d.UUID, d.Metadata, d.Payload = uuid, md, []byte(payload)
	}
	return d
}
