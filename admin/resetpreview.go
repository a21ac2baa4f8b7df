package admin

import (
	"context"
	"errors"
	"fmt"

	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// PreviewBound bounds the entries PreviewReset counts on one partition: a move over more is
// reported as at least PreviewBound (Exact false).
const PreviewBound = 100000

// ResetPreview is what ResetGroupOffset to an offset would do, partition by partition,
// without doing it.
type ResetPreview struct {
	Topic, Group string
	To           Offset
	// Skip is the messages the group would never deliver (moving forward); Redeliver those
	// it would deliver again (moving back), summed over partitions.
	Skip, Redeliver int64
	// Exact is false when some partition's count hit PreviewBound (its count is then a lower
	// bound).
	Exact bool
	// Pending is the entries delivered and not acked: they stay pending whatever the offset.
	Pending    int64
	Partitions []PartitionResetPreview
}

// PartitionResetPreview is one partition of a ResetPreview.
type PartitionResetPreview struct {
	Partition int
	// Current is the group's last delivered id now ("" where the group does not exist);
	// Target the one the reset would set (the partition's last id for OffsetLatest).
	Current, Target string
	Skip, Redeliver int64
	Exact           bool
	// Created: the group does not exist on the partition; the reset would create it there,
	// to deliver the entries after Target (Redeliver counts them).
	Created bool
	Pending int64
}

// PreviewReset counts, per partition of topic, the entries a ResetGroupOffset of group to
// the offset would skip or deliver again: those between the group's position and the new one
// (counted in the server, at most PreviewBound per partition; moving to latest skips the
// group's lag exactly, as GroupLag counts it). The counts are those of the moment: messages
// published meanwhile are not in them. ErrGroupNotFound when the group exists on no
// partition.
func (a *Admin) PreviewReset(ctx context.Context, topic, group string, to Offset) (ResetPreview, error) {
	target, err := to.groupID()
	if err != nil {
		return ResetPreview{}, err
	}
	gl, err := a.GroupLag(ctx, topic, group)
	if err != nil {
		return ResetPreview{}, err
	}
	q, err := a.QueueInfo(ctx, topic)
	if err != nil {
		return ResetPreview{}, err
	}
	pv := ResetPreview{Topic: topic, Group: group, To: to, Exact: true, Pending: gl.Pending}
	have := map[int]PartitionLag{}
	for _, p := range gl.Partitions {
		have[p.Partition] = p
	}
	for _, pi := range q.PerPartition {
		pp, err := a.previewPartition(ctx, pi, have, target)
		if err != nil {
			return ResetPreview{}, err
		}
		pv.add(pp)
	}
	return pv, nil
}

func (pv *ResetPreview) add(pp PartitionResetPreview) {
	pv.Partitions = append(pv.Partitions, pp)
	pv.Skip += pp.Skip
	pv.Redeliver += pp.Redeliver
	pv.Exact = pv.Exact && pp.Exact
}

// previewPartition previews the move of one partition to target ("$": its last entry).
func (a *Admin) previewPartition(ctx context.Context, pi PartitionInfo, have map[int]PartitionLag, target string) (PartitionResetPreview, error) {
	gl, exists := have[pi.Partition]
	pp := PartitionResetPreview{Partition: pi.Partition, Target: target, Exact: true, Created: !exists, Pending: gl.Pending}
	if target == "$" {
		pp.Target = orDefault(pi.LastID, "0-0")
	}
	if !exists {
		n, exact, err := a.count(ctx, pi.Stream, "("+pp.Target, "+")
		pp.Redeliver, pp.Exact = n, exact
		return pp, err
	}
	pp.Current = gl.LastDeliveredID
	switch {
	case target == "$":
		pp.Skip, pp.Exact = gl.Lag, gl.Exact
	case streamid.Less(pp.Current, pp.Target):
		n, exact, err := a.count(ctx, pi.Stream, "("+pp.Current, pp.Target)
		pp.Skip, pp.Exact = n, exact
		return pp, err
	case streamid.Less(pp.Target, pp.Current):
		n, exact, err := a.count(ctx, pi.Stream, "("+pp.Target, pp.Current)
		pp.Redeliver, pp.Exact = n, exact
		return pp, err
	}
	return pp, nil
}

// count counts the entries of a partition stream between two ids, at most PreviewBound.
func (a *Admin) count(ctx context.Context, key, start, end string) (int64, bool, error) {
	n, exact, err := stream.CountBetween(ctx, a.rdb, key, start, end, PreviewBound)
	if errors.Is(err, stream.ErrInvalidID) {
		return 0, false, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	return n, exact, err
}
