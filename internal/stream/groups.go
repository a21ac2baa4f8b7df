package stream

import (
	"context"
	"crypto/rand"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/script"
	"github.com/streamq-dev/streamq/internal/streamid"
)

var (
	//go:embed lua/regroup.lua
	regroupSrc    string
	regroupScript = script.New(regroupSrc)
)

// IsNoGroup reports whether err says a stream or its consumer group does not exist (NOGROUP):
// the group was destroyed, or the stream deleted or lost with a flushed Redis.
func IsNoGroup(err error) bool { return err != nil && redis.HasErrorPrefix(err, "NOGROUP") }

// Lost is a group that may have disappeared from a stream, and where it stood: the stream's
// commit-frontier hash (Commit), the highest id the caller acked there (Acked, "" when none)
// and where the group starts when neither survived (StartID).
type Lost struct {
	Stream, Commit, Group string
	Acked, StartID        string
}

// Regroup creates l's group on its stream when it is missing, at the later of the group's
// commit frontier and l.Acked, or at l.StartID when neither survived. created is false when
// the group existed; pos is where the new group starts. A call whose reply was lost and that
// go-redis sent again reports the creation it made (keys.Regrouped), so each recreation is
// reported once.
func Regroup(ctx context.Context, rdb redis.Scripter, l Lost) (created bool, pos string, err error) {
	stream, commitKey, group, acked, startID := l.Stream, l.Commit, l.Group, l.Acked, l.StartID
	token := rand.Text() // one per call: a retry of it sends the same
	res, err := regroupScript.Run(ctx, rdb, []string{stream, commitKey, keys.RegisteredGroups(stream), keys.Regrouped(stream)},
		group, acked, startID, token).Slice()
	if err != nil {
		return false, "", fmt.Errorf("recreate group %q on %s: %w", group, stream, err)
	}
	if len(res) != 2 {
		return false, "", fmt.Errorf("recreate group %q on %s: unexpected reply %v", group, stream, res)
	}
	n, _ := res[0].(int64)
	pos, _ = res[1].(string)
	return n == 1, pos, nil
}

// Highest returns the highest id of entries (which must not be empty).
func Highest(entries []Acked) string { return highest(entries) }

// Later returns the later of two stream ids; "" counts as earlier than any id.
func Later(a, b string) string {
	if a == "" || (b != "" && streamid.Less(a, b)) {
		return b
	}
	return a
}

var (
	//go:embed lua/prune.lua
	pruneSrc    string
	pruneScript = script.New(pruneSrc)
)

// PruneConsumers removes the consumers of group on stream that are not in live, hold no
// pending entries and have been idle for minIdle, in one atomic step, and returns their names.
func PruneConsumers(ctx context.Context, rdb redis.Scripter, stream, group string, minIdle time.Duration, live []string) ([]string, error) {
	args := make([]any, 0, 2+len(live))
	args = append(args, group, minIdle.Milliseconds())
	for _, m := range live {
		args = append(args, m)
	}
	names, err := pruneScript.Run(ctx, rdb, []string{stream}, args...).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("prune consumers of group %q on %s: %w", group, stream, err)
	}
	return names, nil
}
