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
// original id is kept.
func ReplayFields(values map[string]any, dlqID string) ([]any, error) {
	uuid, md, payload, err := codec.Decode(values)
	if err != nil {
		return nil, fmt.Errorf("dead letter %s: %w", dlqID, err)
	}
	for _, k := range []string{codec.HeaderRetryCount, codec.HeaderRetryGroup, codec.HeaderDeadLetter, codec.HeaderReplay} {
		delete(md, k)
	}
	md[codec.HeaderReplayedFrom] = dlqID
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
