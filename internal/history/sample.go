package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrMalformed reports a history entry that is not a sample.
var ErrMalformed = errors.New("malformed history sample")

// Sample is one reading of a topic's counters.
type Sample struct {
	Time         time.Time // the Redis server's clock when the counters were read
	EntriesAdded int64     // messages ever published to the partitions, summed
	Length       int64     // published messages the partitions hold, summed
	Retries      int64     // retry entries the partitions hold, summed
	DLQLength    int64     // dead letters, summed
	Groups       map[string]Group
}

// Group is one consumer group in a sample.
type Group struct {
	EntriesRead int64         `json:"r"`  // entries delivered so far, summed
	Lag         int64         `json:"l"`  // entries still to deliver, summed
	Pending     int64         `json:"p"`  // delivered, not yet acked
	TimeLag     time.Duration `json:"tl"` // age of the oldest entry still to deliver (ns)
	Members     int           `json:"m"`  // live members
}

// Field names of a sample entry.
const (
	fieldTime   = "t"
	fieldAdded  = "added"
	fieldLength = "len"
	fieldRetry  = "retries"
	fieldDLQ    = "dlq"
	fieldGroups = "groups"
)

// encode returns the entry's field/value pairs.
func (s Sample) encode() []string {
	groups := s.Groups
	if groups == nil {
		groups = map[string]Group{}
	}
	g, _ := json.Marshal(groups) // a map of plain structs always marshals
	return []string{
		fieldTime, strconv.FormatInt(s.Time.UnixMilli(), 10),
		fieldAdded, strconv.FormatInt(s.EntriesAdded, 10),
		fieldLength, strconv.FormatInt(s.Length, 10),
		fieldRetry, strconv.FormatInt(s.Retries, 10),
		fieldDLQ, strconv.FormatInt(s.DLQLength, 10),
		fieldGroups, string(g),
	}
}

// Decode reads a sample from a history entry's fields; ErrMalformed when one is missing or
// does not parse.
func Decode(values map[string]any) (Sample, error) {
	var s Sample
	nums := []struct {
		name string
		dst  *int64
	}{{fieldAdded, &s.EntriesAdded}, {fieldLength, &s.Length}, {fieldRetry, &s.Retries}, {fieldDLQ, &s.DLQLength}}
	t, err := intField(values, fieldTime)
	if err != nil {
		return Sample{}, err
	}
	s.Time = time.UnixMilli(t)
	for _, n := range nums {
		if *n.dst, err = intField(values, n.name); err != nil {
			return Sample{}, err
		}
	}
	raw, _ := values[fieldGroups].(string)
	if err := json.Unmarshal([]byte(raw), &s.Groups); err != nil || s.Groups == nil {
		return Sample{}, fmt.Errorf("%w: field %s: %q", ErrMalformed, fieldGroups, raw)
	}
	return s, nil
}

func intField(values map[string]any, name string) (int64, error) {
	raw, _ := values[name].(string)
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: field %s: %q", ErrMalformed, name, raw)
	}
	return n, nil
}
