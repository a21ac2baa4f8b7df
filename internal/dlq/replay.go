package dlq

import (
	"fmt"
	"strconv"

	"github.com/streamq-dev/streamq/internal/codec"
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

// ReplayFields rebuilds the message of a DLQ entry for its original partition: the retry and
// dead-letter marks are removed, x-force-partition-id and x-replayed-from are set, the
// original id is kept. Unless allGroups, the entry is marked for the group that failed it
// (x-retry-group): the other groups, which handled the message, skip it as they skip a
// retry. A letter without a group goes to every group.
func ReplayFields(values map[string]any, dlqID string, allGroups bool) ([]any, error) {
	uuid, md, payload, err := codec.Decode(values)
	if err != nil {
		return nil, fmt.Errorf("dead letter %s: %w", dlqID, err)
	}
	for _, k := range []string{codec.HeaderRetryCount, codec.HeaderRetryGroup, codec.HeaderDeadLetter, codec.HeaderReplay} {
		delete(md, k)
	}
	md[codec.HeaderReplayedFrom] = dlqID
	if g, _ := values[FieldGroup].(string); g != "" && !allGroups {
		md[codec.HeaderRetryGroup] = g // only the group that failed it delivers it, as a retry
	}
	md[codec.HeaderForcePartition] = strconv.Itoa(PartitionOf(values))
	if md[codec.HeaderOriginalID] == "" {
		if orig, _ := values[FieldOriginalMessageID].(string); orig != "" {
			md[codec.HeaderOriginalID] = orig
		}
	}
	fields, err := codec.Encode(uuid, md, []byte(payload))
	if err != nil {
		return nil, fmt.Errorf("dead letter %s: %w", dlqID, err)
	}
	out := make([]any, 0, 2*len(fields))
	for k, v := range fields {
		out = append(out, k, v)
	}
	return out, nil
}
