package retry

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Park is a delayed message parked in its partition's delay set: Item waits in ZSet under
// ID (its blob in the hash Items) until Due.
type Park struct {
	ZSet, Items, ID string
	Due             time.Time
	Item            Item
}

// Cmd queues the parking on pipe, by SHA: LoadScripts caches the script first. Parking the
// same ID again moves its due time.
func (p Park) Cmd(ctx context.Context, pipe redis.Pipeliner) (*redis.Cmd, error) {
	blob, err := p.Item.Encode()
	if err != nil {
		return nil, err
	}
	return parkScript.EvalSha(ctx, pipe, []string{p.ZSet, p.Items}, p.ID, p.Due.UnixMilli(), blob), nil
}
