package retention

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/streamq-dev/streamq/internal/partition"
)

// A length retention survives its record in the topic's metadata; a topic without a record
// gets the default MaxLen under the acked policy.
func TestLengthRecorded(t *testing.T) {
	for _, l := range []Length{{MaxLen: 500, Exact: true, Hard: true}, {MaxLen: -1}, {MaxLen: 7}} {
		s := l.Settings()
		m := partition.Meta{}
		for i := 0; i+1 < len(s); i += 2 {
			switch s[i] {
			case partition.FieldMaxLen:
				m.MaxLen = int64(partition.ParseCount(s[i+1]))
				if s[i+1] == "-1" {
					m.MaxLen = -1
				}
			case partition.FieldExactLen:
				m.ExactLen = s[i+1] == "1"
			case partition.FieldTrimPolicy:
				m.TrimPolicy = s[i+1]
			}
		}
		assert.Equal(t, l, Recorded(m))
	}
	assert.Equal(t, Length{MaxLen: partition.DefaultMaxLen}, Recorded(partition.Meta{}))
	assert.Equal(t, Rule{}, Length{MaxLen: -1}.Rule(), "off: no length rule")
	assert.Equal(t, Rule{MaxLen: 9, Exact: true, Hard: true}, Length{MaxLen: 9, Exact: true, Hard: true}.Rule())
}
