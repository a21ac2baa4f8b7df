package streamid

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestKeySortsAsTheID: Key pads both parts to 20 digits, so ids sort as strings in their
// numeric order, up to the largest uint64 sequence.
func TestKeySortsAsTheID(t *testing.T) {
	ids := []string{"0-0", "0-1", "9-0", "10-0", "10-2", "10-10", "1700000000000-18446744073709551615", "1700000000001-0"}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = Key(id)
		assert.Len(t, keys[i], 41, id)
	}
	assert.True(t, sort.StringsAreSorted(keys), "%v", keys)
	assert.Equal(t, "00000000000000000010-00000000000000000002", Key("10-2"))
	assert.Equal(t, Key("0-0"), Key("not an id"))
}
