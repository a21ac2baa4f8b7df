// Package dlq writes, reads, replays and deletes dead letters. Each partition has its own DLQ
// stream in the partition's hash slot, so a dead letter is written in the same script that
// acks the original, and replayed in the same script that appends it back.
package dlq

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/script"
)

// Fields of a DLQ entry besides the Watermill message fields (the seed's names).
const (
	FieldOriginalTopic     = "originalTopic"
	FieldTimestamp         = "timestamp"
	FieldFailedAt          = "failedAt"
	FieldRetryCount        = "retryCount"
	FieldPartitionID       = "partitionId"
	FieldHeaders           = "headers"
	FieldOriginalMessageID = "originalMessageId"
	FieldMaxRetries        = "maxRetries"
	FieldReason            = "reason"
	FieldGroup             = "group"
	FieldOriginalStreamID  = "originalStreamId"
	FieldRaw               = "raw"
)

var (
	//go:embed lua/deadletter.lua
	deadletterSrc string
	//go:embed lua/replay.lua
	replaySrc string

	deadletterScript = script.New(deadletterSrc)
	replayScript     = script.New(replaySrc)
)

// Record is one dead letter as the seed describes it.
type Record struct {
	OriginalTopic     string
	Partition         int
	OriginalMessageID string // first stream id of the message
	OriginalStreamID  string // stream id of the failed delivery
	RetryCount        int
	MaxRetries        int
	Timestamp         time.Time // when the message was first published (its original id's time)
	FailedAt          time.Time
	Reason            string
	Group             string
	Headers           string         // JSON of the message metadata
	Message           map[string]any // the message's stream fields (uuid, metadata, payload)
	Raw               string         // JSON of an undecodable entry's fields
}

// Fields returns the DLQ entry's field, value pairs.
func (r Record) Fields() []any {
	out := []any{
		FieldOriginalTopic, r.OriginalTopic,
		FieldPartitionID, strconv.Itoa(r.Partition),
		FieldOriginalMessageID, r.OriginalMessageID,
		FieldOriginalStreamID, r.OriginalStreamID,
		FieldRetryCount, strconv.Itoa(r.RetryCount),
		FieldMaxRetries, strconv.Itoa(r.MaxRetries),
		FieldTimestamp, strconv.FormatInt(r.Timestamp.UnixMilli(), 10),
		FieldFailedAt, strconv.FormatInt(r.FailedAt.UnixMilli(), 10),
		FieldReason, r.Reason,
		FieldGroup, r.Group,
		FieldHeaders, r.Headers,
	}
	if r.Raw != "" {
		out = append(out, FieldRaw, r.Raw)
	}
	for k, v := range r.Message {
		out = append(out, k, v)
	}
	return out
}

// Add writes r to dlqStream and acks e, in one fenced script; held reports that the group
// held e (the ack acked it).
func Add(ctx context.Context, rdb redis.Scripter, e fence.Entry, dlqStream string, r Record) (string, bool, error) {
	args := append([]any{e.Fence.Token, e.Group, e.ID}, r.Fields()...)
	res, err := fence.Run(ctx, rdb, deadletterScript, "dead-letter "+e.ID+" of "+e.Stream, []string{e.Fence.Key, e.Stream, dlqStream}, args...)
	if err != nil {
		return "", false, err
	}
	dlqID, held := fence.Settled(res)
	return dlqID, held, nil
}

// ReplayArgs describes one replay.
type ReplayArgs struct {
	DLQStream, Stream string
	ID                string       // DLQ entry id
	Delete            bool         // XDEL the DLQ entry after appending
	Fence             *fence.Fence // set when a group consuming the DLQ replays: ack it fenced
	Group             string       // that group
	Entry             Replayed     // the entry to append (see Rebuild)
	// Once replays only a letter not replayed before: one with a replay mark is left alone,
	// and Replay returns a *ReplayedError. Checked in the replay's script: two replays with
	// Once append one entry.
	Once bool
}

// ErrNotFound reports a DLQ entry id that does not exist.
var ErrNotFound = errors.New("dead letter not found")

// ErrReplayed reports a replay with ReplayArgs.Once of a letter replayed before; the error
// is a *ReplayedError.
var ErrReplayed = errors.New("dead letter replayed before")

// ReplayedError is the error of a replay with ReplayArgs.Once of a letter replayed before:
// nothing was written. Mark is the earlier replay.
type ReplayedError struct {
	ID   string // the DLQ entry id
	Mark Mark
}

func (e *ReplayedError) Error() string {
	return fmt.Sprintf("%s: %s at %s as %s", ErrReplayed, e.ID, e.Mark.At.UTC().Format(time.RFC3339Nano), e.Mark.As)
}

// Unwrap returns ErrReplayed.
func (e *ReplayedError) Unwrap() error { return ErrReplayed }

// Replay appends a.Entry to a.Stream, storing its payload apart when a.Entry.Stored is set, and
// acks or deletes the DLQ entry, in one script. A replay to one group (a.Entry.RetryGroup) is
// recorded in that group's retry index and count beside a.Stream, as a retry is.
func Replay(ctx context.Context, rdb redis.Scripter, a ReplayArgs) (string, error) {
	fenceKey, token := a.DLQStream, ""
	if a.Fence != nil {
		fenceKey, token = a.Fence.Key, a.Fence.Token
	}
	del := "0"
	if a.Delete {
		del = "1"
	}
	// An inline replay names the DLQ key for the payload key and index, which it leaves alone.
	pkey, index, ref, body, ttl := a.DLQStream, a.DLQStream, "", []byte(nil), int64(0)
	if st := a.Entry.Stored; st != nil {
		pkey, index, ref, body, ttl = st.Key, st.Index, st.Ref, st.Payload, st.TTL.Milliseconds()
	}
	retryIndex, retryCount := a.DLQStream, a.DLQStream
	if g := a.Entry.RetryGroup; g != "" {
		retryIndex, retryCount = keys.RetryIndex(a.Stream, g), keys.RetryCount(a.Stream)
	}
	once := "0"
	if a.Once {
		once = "1"
	}
	args := append([]any{a.ID, del, token, a.Group, ref, body, ttl, a.Entry.RetryGroup, once}, a.Entry.Fields...)
	op := "replay " + a.ID + " of " + a.DLQStream
	res, err := replayScript.Run(ctx, rdb,
		[]string{a.DLQStream, a.Stream, fenceKey, keys.ReplayMarks(a.DLQStream), pkey, index, retryIndex, retryCount}, args...).Result()
	res, err = fence.Check(op, res, err)
	if err != nil {
		return "", err
	}
	return replayResult(op, a.ID, res)
}

// replayResult reads the reply of replay.lua: the new id, 0 (not found) or {mark} (replayed
// before).
func replayResult(op, id string, res any) (string, error) {
	switch r := res.(type) {
	case int64:
		return "", fmt.Errorf("%s: %w", op, ErrNotFound) // 0: -1 is fence.Check's
	case []any:
		var mark Mark
		if len(r) == 1 {
			s, _ := r[0].(string)
			mark, _ = parseMark(s)
		}
		return "", fmt.Errorf("%s: %w", op, &ReplayedError{ID: id, Mark: mark})
	}
	newID, _ := res.(string)
	return newID, nil
}
