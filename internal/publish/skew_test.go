package publish

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// replyErr is an error reply of the server, as go-redis types them (redis.Error).
type replyErr string

func (r replyErr) Error() string { return string(r) }
func (replyErr) RedisError()     {}

// TestSkewOf: the server's clock is read from append.lua's refusal only, wrapped or not.
func TestSkewOf(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		wantMs int64
		wantOK bool
	}{
		{name: "refusal", err: replyErr("SKEW 1712345678901 server time (ms): the buckets named, 1 to 4, do not hold 7 to 9"),
			wantMs: 1712345678901, wantOK: true},
		{name: "wrapped", err: fmt.Errorf("publish: %w", replyErr("SKEW 42 server time")), wantMs: 42, wantOK: true},
		{name: "no error"},
		{name: "another reply", err: replyErr("ERR wrong number of arguments for 'xadd' command")},
		{name: "not a reply", err: errors.New("SKEW 42 server time")},
		{name: "no clock", err: replyErr("SKEW soon")},
		{name: "a longer word", err: replyErr("SKEWED 42")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, ok := skewOf(tt.err)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.wantMs, ms)
		})
	}
}
