package admin

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/streamq-dev/streamq/internal/dlq"
	"github.com/streamq-dev/streamq/internal/retention"
	"github.com/streamq-dev/streamq/internal/stream"
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

	// ReplayedAt and ReplayedAs tell the latest replay of a letter kept in the DLQ: when, and
	// the stream id of the entry appended to its partition. Zero and "" when never replayed
	// (or more than a week after the latest replay from its partition's DLQ).
	ReplayedAt time.Time
	ReplayedAs string
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
	total, err := dlq.Size(ctx, a.rdb, streams(a.space.DLQ, topic, 0, n))
	if err != nil {
		return 0, fmt.Errorf("DLQ size of %q: %w", topic, err)
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
		letters, err := dlq.Read(ctx, a.rdb, a.space.DLQ(topic, p), "-", int64(limit))
		if err != nil {
			return nil, fmt.Errorf("read DLQ of %q partition %d: %w", topic, p, err)
		}
		marked, err := a.marked(ctx, topic, p, letters)
		if err != nil {
			return nil, err
		}
		all = append(all, marked...)
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
	marked, err := a.marked(ctx, topic, partition, []dlq.Entry{m})
	if err != nil {
		return DeadLetter{}, err
	}
	return marked[0], nil
}

// marked decodes the dead letters of partition p with their replay marks.
func (a *Admin) marked(ctx context.Context, topic string, p int, letters []dlq.Entry) ([]DeadLetter, error) {
	ids := make([]string, len(letters))
	for i, m := range letters {
		ids[i] = m.ID
	}
	marks, err := dlq.Marks(ctx, a.rdb, a.space.DLQ(topic, p), ids)
	if err != nil {
		return nil, err
	}
	out := make([]DeadLetter, len(letters))
	for i, m := range letters {
		out[i] = toDeadLetter(topic, p, m)
		if mk, ok := marks[m.ID]; ok {
			out[i].ReplayedAt, out[i].ReplayedAs = mk.At, mk.As
		}
	}
	return out, nil
}

func (a *Admin) dlqMessage(ctx context.Context, topic string, partition int, id string) (dlq.Entry, error) {
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return dlq.Entry{}, err
	}
	if err := a.checkPartition(topic, partition, n); err != nil {
		return dlq.Entry{}, err
	}
	m, err := dlq.Get(ctx, a.rdb, a.space.DLQ(topic, partition), id)
	switch {
	case errors.Is(err, stream.ErrInvalidID):
		return dlq.Entry{}, fmt.Errorf("%w: %q is not a stream id", ErrInvalidArgument, id)
	case errors.Is(err, dlq.ErrNotFound):
		return dlq.Entry{}, fmt.Errorf("%w: dead letter %s of %q partition %d", ErrEntryNotFound, id, topic, partition)
	case err != nil:
		return dlq.Entry{}, fmt.Errorf("read dead letter %s: %w", id, err)
	}
	return m, nil
}

// ReplayOptions tunes a replay.
type ReplayOptions struct {
	// Delete removes the DLQ entry once replayed. Default: keep it, marked as replayed.
	Delete bool
	// AllGroups delivers the replay to every consumer group of the topic. Default: only to
	// the group that failed the message (the letter's Group), like a retry: the groups that
	// handled it skip it. A letter without a group goes to every group either way.
	AllGroups bool
	// Again replays letters replayed before (ReplayedAt set). Default: leave them alone, so
	// replaying twice replays once: ReplayDeadLetter replays nothing and returns an
	// *AlreadyReplayedError (ErrAlreadyReplayed), ReplayAll skips them. The check and the
	// replay are one atomic step: of racing replays of one letter without Again, one replays.
	Again bool
	// DryRun makes ReplayAll count, and pass to keep, the letters it would replay, and replay
	// nothing.
	DryRun bool
}

// ReplayDeadLetter appends dead letter id back to its original partition (with
// x-force-partition-id, x-replayed-from, the retry count reset) and returns the new stream id.
// By default only the group that failed the message delivers the replay (opts.AllGroups: every
// group), and the letter stays in the DLQ marked as replayed (opts.Delete: removed). A letter
// replayed before is not replayed again unless opts.Again: the error is then an
// *AlreadyReplayedError (errors.Is ErrAlreadyReplayed) that says when and as which entry.
// At maxmemory Redis refuses the replay as a whole: the error is then a *RedisFullError
// (errors.Is streamq.ErrRedisFull) that says what frees memory.
func (a *Admin) ReplayDeadLetter(ctx context.Context, topic string, partition int, id string, opts ReplayOptions) (string, error) {
	m, err := a.dlqMessage(ctx, topic, partition, id)
	if err != nil {
		return "", err
	}
	return a.replay(ctx, topic, partition, m, opts)
}

func (a *Admin) replay(ctx context.Context, topic string, partition int, m dlq.Entry, opts ReplayOptions) (string, error) {
	start := time.Now()
	id, err := a.replayOnce(ctx, topic, partition, m, opts)
	err = a.fullReplay(ctx, topic, partition, m.ID, err)
	var replayed *dlq.ReplayedError
	if errors.As(err, &replayed) {
		return "", &AlreadyReplayedError{Topic: topic, Partition: partition, ID: m.ID,
			ReplayedAt: replayed.Mark.At, ReplayedAs: replayed.Mark.As} // nothing replayed: not timed
	}
	a.metrics.DLQReplay(topic, time.Since(start))
	return id, err
}

// replayOnce replays m, unless it was replayed before and not opts.Again.
func (a *Admin) replayOnce(ctx context.Context, topic string, partition int, m dlq.Entry, opts ReplayOptions) (string, error) {
	target := dlq.PartitionOf(m.Values)
	if target != partition {
		return "", fmt.Errorf("%w: dead letter %s in partition %d's DLQ names partition %d", ErrInvalidArgument, m.ID, partition, target)
	}
	entry, err := dlq.Rebuild(m.Values, m.ID, opts.AllGroups, a.offload.of(a.space, topic, partition))
	if err != nil {
		return "", err
	}
	id, err := dlq.Replay(ctx, a.rdb, dlq.ReplayArgs{
		DLQStream: a.space.DLQ(topic, partition), Stream: a.space.PartitionStream(topic, partition),
		ID: m.ID, Delete: opts.Delete, Entry: entry, Once: !opts.Again,
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
// it replayed: a letter deleted or replayed between its read and its replay is skipped,
// uncounted, and on an error the count is of the letters replayed before it. Letters
// replayed before are skipped unless opts.Again; with opts.DryRun nothing is replayed and the
// count is of what would be. At maxmemory it stops at the first letter Redis refuses, with a
// *RedisFullError.
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
		msgs, err := dlq.Read(ctx, a.rdb, a.space.DLQ(topic, p), start, 100)
		if err != nil || len(msgs) == 0 {
			return done, err
		}
		letters, err := a.marked(ctx, topic, p, msgs)
		if err != nil {
			return done, err
		}
		for i, m := range msgs {
			if done >= limit {
				break
			}
			if !opts.Again && !letters[i].ReplayedAt.IsZero() {
				continue // replayed before
			}
			if keep != nil && !keep(letters[i]) {
				continue
			}
			if opts.DryRun {
				done++
				continue
			}
			_, err := a.replay(ctx, topic, p, m, opts)
			switch {
			case errors.Is(err, ErrEntryNotFound), errors.Is(err, ErrAlreadyReplayed): // deleted or replayed meanwhile
			case err != nil:
				return done, err
			default:
				done++
			}
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
	return done, nil
}

// DeleteDeadLetter removes one dead letter; false when it did not exist. An id that is not
// a stream id is ErrInvalidArgument, as for DLQEntry.
func (a *Admin) DeleteDeadLetter(ctx context.Context, topic string, partition int, id string) (bool, error) {
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return false, err
	}
	if err := a.checkPartition(topic, partition, n); err != nil {
		return false, err
	}
	ok, err := dlq.Delete(ctx, a.rdb, a.space.DLQ(topic, partition), id)
	if errors.Is(err, stream.ErrInvalidID) {
		return false, fmt.Errorf("%w: %q is not a stream id", ErrInvalidArgument, id)
	}
	if err != nil {
		return false, fmt.Errorf("delete dead letter %s: %w", id, err)
	}
	if ok {
		a.metrics.DLQDeleted(topic, 1)
	}
	return ok, dlq.ForgetMarks(ctx, a.rdb, a.space.DLQ(topic, partition), id)
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
		c, err := retention.TrimLen(ctx, a.rdb, a.space.DLQ(topic, p), 0)
		if err != nil {
			return removed, fmt.Errorf("clear DLQ of %q partition %d: %w", topic, p, err)
		}
		removed += c
		if err := dlq.ForgetMarks(ctx, a.rdb, a.space.DLQ(topic, p)); err != nil {
			return removed, err
		}
	}
	a.metrics.DLQCleared(topic, int(removed))
	return removed, nil
}

func toDeadLetter(topic string, p int, m dlq.Entry) DeadLetter {
	l := dlq.Decode(m.Values)
	return DeadLetter{
		Topic: topic, Partition: p, ID: m.ID,
		UUID: l.UUID, Payload: l.Payload, Metadata: l.Metadata,
		Reason: l.Reason, Group: l.Group, RetryCount: l.RetryCount, MaxRetries: l.MaxRetries,
		OriginalMessageID: l.OriginalMessageID, OriginalStreamID: l.OriginalStreamID,
		Timestamp: l.Timestamp, FailedAt: l.FailedAt, Raw: l.Raw,
	}
}
