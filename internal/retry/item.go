package retry

import (
	"fmt"
	"strconv"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/streamq-dev/streamq/internal/codec"
)

// Item is one parked entry of a retry or delay set: the seed's retry item fields, plus the
// stream fields to append when it is due.
type Item struct {
	Topic             string   `msgpack:"topic"`
	PartitionID       string   `msgpack:"partitionId"`
	RetryCount        string   `msgpack:"retryCount"`
	MaxRetries        string   `msgpack:"maxRetries"`
	OriginalMessageID string   `msgpack:"originalMessageId"`
	Group             string   `msgpack:"group"`
	Fields            []string `msgpack:"fields"` // field, value, field, value ...
}

// Origin is what an item records of the message it parks: its topic and partition, the
// number of this retry and the retry cap (0 and -1 for a publish-time delay), the id of the
// message's first entry and the group it is retried for ("" for a delay).
type Origin struct {
	Topic                  string
	Partition              int
	RetryCount, MaxRetries int
	OriginalID, Group      string
}

// NewItem builds the item of o from stream fields.
func NewItem(o Origin, fields map[string]any) (Item, error) {
	flat, err := Flatten(fields)
	if err != nil {
		return Item{}, err
	}
	return Item{
		Topic: o.Topic, PartitionID: strconv.Itoa(o.Partition), RetryCount: strconv.Itoa(o.RetryCount),
		MaxRetries: strconv.Itoa(o.MaxRetries), OriginalMessageID: o.OriginalID, Group: o.Group, Fields: flat,
	}, nil
}

// Encode serialises the item for the items hash.
func (it Item) Encode() (string, error) {
	b, err := msgpack.Marshal(it)
	if err != nil {
		return "", fmt.Errorf("encode retry item: %w", err)
	}
	return string(b), nil
}

// DecodeItem reads an item blob.
func DecodeItem(blob string) (Item, error) {
	var it Item
	if err := codec.Unmarshal(blob, &it); err != nil {
		return Item{}, fmt.Errorf("decode retry item: %w", err)
	}
	return it, nil
}

// Partition is the item's partition as the seed reads it: anything but a non-negative integer
// is partition 0.
func (it Item) Partition() int {
	p, err := strconv.Atoi(it.PartitionID)
	if err != nil || p < 0 {
		return 0
	}
	return p
}

// Values returns the stream fields as a map for XADD.
func (it Item) Values() map[string]any {
	out := make(map[string]any, len(it.Fields)/2)
	for i := 0; i+1 < len(it.Fields); i += 2 {
		out[it.Fields[i]] = it.Fields[i+1]
	}
	return out
}

// Flatten turns marshaled stream fields into field, value pairs of strings.
func Flatten(fields map[string]any) ([]string, error) {
	flat := make([]string, 0, 2*len(fields))
	for k, v := range fields {
		s, err := toString(v)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", k, err)
		}
		flat = append(flat, k, s)
	}
	return flat, nil
}

func toString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	case nil:
		return "", nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case fmt.Stringer:
		return x.String(), nil
	default:
		return "", fmt.Errorf("unsupported stream value type %T", v)
	}
}
