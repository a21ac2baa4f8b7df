package stream

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/redis/go-redis/v9"
	"github.com/streamq-dev/streamq/internal/script"
)

//go:embed lua/between.lua
var betweenSrc string

var betweenScript = script.New(betweenSrc)

// CountBetween counts the entries of stream from start to end ("-", "+", an id, "(id" to
// exclude it) in the server (between.lua), at most bound of them: exact is false when the
// range holds more (n is then bound). A bad id is ErrInvalidID.
func CountBetween(ctx context.Context, rdb redis.UniversalClient, stream, start, end string, bound int64) (n int64, exact bool, err error) {
	res, err := betweenScript.Run(ctx, rdb, []string{stream}, start, end, bound).Int64Slice()
	if err != nil {
		return 0, false, fmt.Errorf("count entries of %s: %w", stream, invalidID(err))
	}
	if len(res) != 2 {
		return 0, false, fmt.Errorf("count entries of %s: reply %v", stream, res)
	}
	return res[0], res[1] == 1, nil
}
