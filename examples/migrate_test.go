package examples_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/streamq-dev/streamq/internal/redistest"
)

// TestMigrate runs the live switch: both subscribers in one Router, the publishers switched,
// the old stream drained, the old handler stopped with nothing left to import.
func TestMigrate(t *testing.T) {
	t.Parallel()
	out := runExample(t, "migrate", "REDIS_URL="+redistest.Start(t).URL())
	for _, want := range []string{"handled 30 of 30 orders: 15 through watermill-redisstream, 15 through streamq",
		"old stream drained: nothing pending, nothing undelivered", "old handler stopped; imported 0 left-over entries"} {
		assert.Contains(t, out, want)
	}
	assert.Equal(t, 15, strings.Count(out, "redisstream order {"), out)
	assert.Equal(t, 15, strings.Count(out, "streamq     order {"), out)
}
