package dlq

import (
	"fmt"
	"strconv"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/payload"
)

// Entry is a DLQ entry as read back.
type Entry struct {
	ID        string
	Partition int
	Values    map[string]any
}

// PartitionOf reads the partition a DLQ entry came from ("partitionId"; bad reads as 0).
func PartitionOf(values map[string]any) int {
	s, _ := values[FieldPartitionID].(string)
	p, err := strconv.Atoi(s)
	if err != nil || p < 0 {
		return 0
	}
	return p
}

// Offloading is how a replay stores a payload larger than Threshold bytes (<= 0: never): in its
// own key, as a publish over the threshold does, so a replayed large message does not sit
// inline in the partition stream.
type Offloading struct {
	Threshold int
	TTL       time.Duration       // the payload key's TTL (0: none)
	Key       func(string) string // the partition's payload key of a reference
	Index     string              // the partition's payload index
}

// Replayed is a dead letter rebuilt for its partition: the entry's fields, and its payload
// when it is stored apart (the fields then carry the reference).
type Replayed struct {
	Fields []any
	Stored *payload.Stored
	// RetryGroup is the group the replay is for (its x-retry-group), "" for every group.
	RetryGroup string
}

// Rebuild rebuilds the message of a DLQ entry for its original partition: the retry and
// dead-letter marks are removed, x-force-partition-id and x-replayed-from are set, the
// original id is kept. Unless allGroups, the entry is marked for the group that failed it
// (x-retry-group): the other groups, which handled the message, skip it as they skip a
// retry. A letter without a group goes to every group. A payload over off.Threshold is
// offloaded under a new reference.
func Rebuild(values map[string]any, dlqID string, allGroups bool, off Offloading) (Replayed, error) {
	uuid, md, body, err := codec.Decode(values)
	if err != nil {
		return Replayed{}, fmt.Errorf("dead letter %s: %w", dlqID, err)
	}
	for _, k := range []string{codec.HeaderRetryCount, codec.HeaderRetryGroup, codec.HeaderDeadLetter, codec.HeaderReplay} {
		delete(md, k)
	}
	md[codec.HeaderReplayedFrom] = dlqID
	if g, _ := values[FieldGroup].(string); g != "" && !allGroups {
		md[codec.HeaderRetryGroup] = g // only the group that failed it delivers it, as a retry
	}
	var r Replayed
	r.RetryGroup = md[codec.HeaderRetryGroup]
	md[codec.HeaderForcePartition] = strconv.Itoa(PartitionOf(values))
	if md[codec.HeaderOriginalID] == "" {
		if orig, _ := values[FieldOriginalMessageID].(string); orig != "" {
			md[codec.HeaderOriginalID] = orig
		}
	}
	inline := []byte(body)
	if payload.Offloads(off.Threshold, len(body)) {
		ref := watermill.NewUUID()
		r.Stored = &payload.Stored{Key: off.Key(ref), Index: off.Index, Ref: ref, Payload: inline, TTL: off.TTL}
		r.Fields, inline = payload.RefFields(ref, len(body)), nil
	}
	fields, err := codec.Encode(uuid, md, inline)
	if err != nil {
		return Replayed{}, fmt.Errorf("dead letter %s: %w", dlqID, err)
	}
	for k, v := range fields {
		r.Fields = append(r.Fields, k, v)
	}
	return r, nil
}
