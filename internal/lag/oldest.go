package lag

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/redis/go-redis/v9"
	"github.com/streamq-dev/streamq/internal/script"
)

var (
	//go:embed lua/oldest.lua
	oldestSrc    string
	oldestScript = script.New(oldestSrc)
)

// walked is what the oldest script found: the first entry after the start that is no other
// group's retry ("" when none), the entries it looked at and the last of them.
type walked struct {
	found, last string
	looked      int
}

// walkOldest walks stream after from, past the entries listed in the retry indexes others,
// looking at limit entries at most (read only, one script call).
func walkOldest(ctx context.Context, rdb redis.Scripter, stream string, others []string, from string, limit int) (walked, error) {
	res, err := oldestScript.Run(ctx, rdb, append([]string{stream}, others...), from, limit).Result()
	if err != nil {
		return walked{}, err
	}
	arr, ok := res.([]any)
	if !ok || len(arr) != 3 {
		return walked{}, fmt.Errorf("unexpected reply %v", res)
	}
	w := walked{}
	w.found, _ = arr[0].(string)
	w.last, _ = arr[2].(string)
	n, _ := arr[1].(int64)
	w.looked = int(n)
	return w, nil
}
