package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/dlq"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// NewDeadLetter is a dead letter written by AddDeadLetter: a message rejected outside a
// handler, by a tool or an operator.
type NewDeadLetter struct {
	// Topic and Partition are where the message belongs: the topic must be registered, the
	// partition one of its partitions. A replay appends it there.
	Topic     string
	Partition int

	// UUID, Payload and Metadata are the message's. UUID "" gets a new one. Metadata must
	// not hold "_watermill_message_uuid"; AddDeadLetter adds x-dead-letter-reason (the
	// Reason), and x-original-message-id (OriginalMessageID) unless it is set.
	UUID     string
	Payload  []byte
	Metadata map[string]string

	// Reason says why the message was rejected. Required.
	Reason string
	// Group is the consumer group that rejected it. Optional: "" names none.
	Group string
	// OriginalMessageID is the message's first stream id in the partition, when it has one
	// (a message read from the partition); optional. OriginalStreamID is the stream id of
	// the delivery that failed; optional, default OriginalMessageID. Both must be stream ids
	// ("ms-seq") when set; neither needs to exist any more.
	OriginalMessageID string
	OriginalStreamID  string
	// RetryCount is how often the message was retried (not negative); MaxRetries its cap
	// (negative: unlimited). Both default to 0.
	RetryCount int
	MaxRetries int
	// FailedAt is when the message was rejected. Optional; default the Redis server's time.
	FailedAt time.Time
}

// AddDeadLetter writes l to the DLQ of its topic's partition and returns it as stored, with
// its DLQ entry id and the defaults filled in. It is an entry like those a Subscriber writes:
// DLQEntries and DLQEntry list it, a Subscriber of streamq.DLQTopic(l.Topic) consumes it, and
// ReplayDeadLetter appends it to partition l.Partition. Nothing is acked: no group's pending
// entry is settled by it. An unregistered topic is ErrTopicNotFound; a bad topic or group name,
// a partition out of range, an empty Reason, a bad stream id, a negative RetryCount or a
// reserved metadata key is ErrInvalidArgument.
func (a *Admin) AddDeadLetter(ctx context.Context, l NewDeadLetter) (DeadLetter, error) {
	if err := a.checkNewDeadLetter(ctx, l); err != nil {
		return DeadLetter{}, err
	}
	if l.FailedAt.IsZero() {
		now, err := a.serverTime(ctx)
		if err != nil {
			return DeadLetter{}, fmt.Errorf("add dead letter to %q: %w", l.Topic, err)
		}
		l.FailedAt = now
	}
	l.FailedAt = time.UnixMilli(l.FailedAt.UnixMilli()) // stored in milliseconds: return what is read back
	rec, md, err := l.record()
	if err != nil {
		return DeadLetter{}, err
	}
	id, err := dlq.Write(ctx, a.rdb, a.space.DLQ(l.Topic, l.Partition), rec)
	if err != nil {
		return DeadLetter{}, fmt.Errorf("add dead letter to %q partition %d: %w", l.Topic, l.Partition, err)
	}
	return DeadLetter{
		Topic: l.Topic, Partition: l.Partition, ID: id,
		UUID: rec.Message[codec.UUIDField].(string), Payload: append([]byte{}, l.Payload...), Metadata: md,
		Reason: rec.Reason, Group: rec.Group, RetryCount: rec.RetryCount, MaxRetries: rec.MaxRetries,
		OriginalMessageID: rec.OriginalMessageID, OriginalStreamID: rec.OriginalStreamID,
		Timestamp: rec.Timestamp, FailedAt: rec.FailedAt,
	}, nil
}

// checkNewDeadLetter validates l against the topic as registered.
func (a *Admin) checkNewDeadLetter(ctx context.Context, l NewDeadLetter) error {
	n, err := a.partitions(ctx, l.Topic)
	if err != nil {
		return err
	}
	if err := a.checkPartition(l.Topic, l.Partition, n); err != nil {
		return err
	}
	if l.Reason == "" {
		return fmt.Errorf("%w: a dead letter needs a reason", ErrInvalidArgument)
	}
	if l.Group != "" {
		if err := checkGroup(l.Group); err != nil {
			return err
		}
	}
	for _, id := range []string{l.OriginalMessageID, l.OriginalStreamID} {
		if _, _, ok := streamid.Parse(id); id != "" && !ok {
			return fmt.Errorf("%w: %q is not a stream id", ErrInvalidArgument, id)
		}
	}
	if l.RetryCount < 0 {
		return fmt.Errorf("%w: retry count %d is negative", ErrInvalidArgument, l.RetryCount)
	}
	return nil
}

// record is the DLQ entry of l, in the format a Subscriber writes, and the message metadata
// it stores.
func (l NewDeadLetter) record() (dlq.Record, map[string]string, error) {
	uuid := l.UUID
	if uuid == "" {
		uuid = watermill.NewUUID()
	}
	md := maps.Clone(l.Metadata)
	if l.OriginalMessageID != "" && md[codec.HeaderOriginalID] == "" {
		if md == nil {
			md = map[string]string{}
		}
		md[codec.HeaderOriginalID] = l.OriginalMessageID
	}
	stream := l.OriginalStreamID
	if stream == "" {
		stream = l.OriginalMessageID
	}
	rec, err := dlq.NewRecord(dlq.Failure{
		Topic: l.Topic, Partition: l.Partition, UUID: uuid, Metadata: md, Payload: l.Payload,
		StreamID: stream, OriginalID: l.OriginalMessageID, Reason: l.Reason, Group: l.Group,
		RetryCount: l.RetryCount, MaxRetries: l.MaxRetries, FailedAt: l.FailedAt,
	})
	if errors.Is(err, codec.ErrReserved) {
		return dlq.Record{}, nil, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	if err != nil {
		return dlq.Record{}, nil, err
	}
	stored := map[string]string{}
	if err := json.Unmarshal([]byte(rec.Headers), &stored); err != nil {
		return dlq.Record{}, nil, err
	}
	return rec, stored, nil
}
