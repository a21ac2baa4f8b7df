package payload

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOffloaderOffloadsOverTheThreshold: a payload is offloaded when it is larger than the
// threshold, never under a threshold of 0 or -1.
func TestOffloaderOffloadsOverTheThreshold(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		threshold int
		size      int
		want      bool
	}{
		{"over", 10, 11, true},
		{"at", 10, 10, false},
		{"under", 10, 3, false},
		{"off (-1)", -1, 1 << 20, false},
		{"off (0)", 0, 1 << 20, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Offloader{Space: space, Threshold: tt.threshold}.Offloads(tt.size))
		})
	}
}

// TestOffloaderOffload: the offloaded append of a partition's entry stores the payload under
// a new reference in the partition's payload key, indexed in its payload index, kept for the
// TTL; the entry's fields lead with the reference and carry the message's other fields.
func TestOffloaderOffload(t *testing.T) {
	t.Parallel()
	o := Offloader{Space: space, Threshold: 4, TTL: time.Minute}
	body := []byte("large payload")
	got := o.Offload("t", 3, body, map[string]any{"uuid": "u-1"})
	again := o.Offload("t", 3, body, map[string]any{"uuid": "u-1"})

	require.NotEmpty(t, got.Ref)
	assert.NotEqual(t, got.Ref, again.Ref, "a new reference for every append")
	assert.Equal(t, Stored{Key: space.Payload("t", 3, got.Ref), Index: space.PayloadIndex("t", 3), Ref: got.Ref,
		Payload: body, TTL: time.Minute}, got.Stored)
	assert.Equal(t, space.PartitionStream("t", 3), got.Stream)
	assert.Equal(t, []any{FieldRef, got.Ref, FieldStorageType, StorageString, FieldOriginalSize, strconv.Itoa(len(body)),
		"uuid", "u-1"}, got.Fields)
	entry := map[string]any{}
	for i := 0; i+1 < len(got.Fields); i += 2 {
		entry[got.Fields[i].(string)] = got.Fields[i+1]
	}
	assert.Equal(t, got.Ref, Ref(entry), "a reader finds the reference in the entry")
}
