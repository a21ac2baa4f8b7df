package stream

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/script"
	"github.com/streamq-dev/streamq/internal/streamid"
)

var (
	//go:embed lua/ack.lua
	ackSrc    string
	ackScript = script.New(ackSrc)
)

// AckKeys are the keys of one ack batch.
type AckKeys struct {
	Lease, Stream, Commit, PayloadIndex string
}

// Acked is one entry to acknowledge: its id, and where its offloaded payload is (if any).
// Held marks an entry a fenced settle step (retry, dead letter) already acked while the
// group held it: its XACK here is a no-op, and it still counts the group as done with it.
type Acked struct {
	ID, Ref, AckSet, PayloadKey string
	Held                        bool
}

// AckBatch is one ack batch of a group on a partition: its keys, the lease token that
// fences it, the ack-delete policy ("none", "immediate", "all-groups-ack"), how long an ack
// set lives, the commit frontier candidate ("" moves nothing) and the entries.
type AckBatch struct {
	Keys         AckKeys
	Token, Group string
	Policy       string
	AckSetTTL    time.Duration
	Frontier     string
	Entries      []Acked
}

// Ack acknowledges b's entries in one script, if its token still holds the lease: see
// lua/ack.lua. It returns fence.ErrLeaseLost when the token does not hold the lease.
func Ack(ctx context.Context, rdb redis.Scripter, b AckBatch) error {
	k, token, group, policy, entries := b.Keys, b.Token, b.Group, b.Policy, b.Entries
	if len(entries) == 0 {
		return nil
	}
	names := append(make([]string, 0, 5), k.Lease, k.Stream, k.Commit, k.PayloadIndex, keys.RegisteredGroups(k.Stream))
	args := make([]any, 0, 6+len(entries))
	args = append(args, token, group, policy, b.AckSetTTL.Milliseconds(), b.Frontier, len(entries))
	for _, e := range entries {
		args = append(args, e.ID)
	}
	for _, e := range entries {
		if e.Ref == "" && policy != "all-groups-ack" {
			continue // nothing more than the XACK (and XDEL under immediate)
		}
		// Unused per-entry keys are the stream key: same slot, never touched.
		ackSet, payloadKey := e.AckSet, e.PayloadKey
		if ackSet == "" {
			ackSet = k.Stream
		}
		if e.Ref == "" {
			payloadKey = k.Stream
		}
		held := "0"
		if e.Held {
			held = "1"
		}
		names = append(names, ackSet, payloadKey)
		args = append(args, e.ID, e.Ref, held)
	}
	_, err := fence.Run(ctx, rdb, ackScript, fmt.Sprintf("ack %d entries on %s", len(entries), k.Stream), names, args...)
	return err
}

// highest is the greatest stream id of entries: the commit frontier's candidate.
func highest(entries []Acked) string {
	best := entries[0].ID
	for _, e := range entries[1:] {
		if streamid.Less(best, e.ID) {
			best = e.ID
		}
	}
	return best
}
