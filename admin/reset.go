package admin

import (
	"context"
	"errors"
	"fmt"

	"github.com/streamq-dev/streamq/internal/stream"
)

// ResetResult reports a ResetGroupOffset.
type ResetResult struct {
	Partitions  int  // partitions whose offset was set
	PendingKept bool // pending entries stayed pending (always true)
	Note        string
}

// ResetGroupOffset moves group's position on every partition of topic to the offset (XGROUP
// SETID per partition, in one pipeline): the next delivery on each partition is the first
// entry after the new last-delivered-id. Beginning is 0-0, latest is "$", an id is used as
// is, a time becomes the greatest id before its millisecond ("<ms-1>-18446744073709551615"),
// so delivery restarts at the first entry at or after it. On a partition where the group
// does not exist it is created at the offset (XGROUP CREATE ... MKSTREAM).
//
// Pending entries are kept: XGROUP SETID leaves the group's pending list alone, so entries
// delivered and not yet acked stay pending and are claimed and re-delivered by the
// partition's next owner, whatever the new offset. The commit frontier is not moved.
// Running members pick the new offset up with their next read. ErrGroupNotFound when the
// group exists on no partition.
func (a *Admin) ResetGroupOffset(ctx context.Context, topic, group string, to Offset) (ResetResult, error) {
	id, err := to.groupID()
	if err != nil {
		return ResetResult{}, err
	}
	n, found, err := a.groupOn(ctx, topic, group)
	if err != nil {
		return ResetResult{}, err
	}
	created, err := a.setGroupID(ctx, topic, group, id, found)
	if err != nil {
		return ResetResult{}, err
	}
	note := fmt.Sprintf("offset of group %q set to %s (%s) on %d partitions; "+
		"pending entries kept: they stay pending and are re-delivered by each partition's next owner", group, to, to.resumes(id), n)
	if created > 0 {
		note += fmt.Sprintf("; group created on %d partitions where it was missing", created)
	}
	return ResetResult{Partitions: n, PendingKept: true, Note: note}, nil
}

// setGroupID sets the group's id on the partitions where it exists and creates it on the
// others; it returns how many it created.
func (a *Admin) setGroupID(ctx context.Context, topic, group, id string, found []bool) (int, error) {
	created, err := stream.SetGroupID(ctx, a.rdb, streams(a.space.PartitionStream, topic, 0, len(found)), found, group, id)
	if errors.Is(err, stream.ErrInvalidID) {
		return created, fmt.Errorf("%w: offset id %q: %w", ErrInvalidArgument, id, err)
	}
	return created, err
}
