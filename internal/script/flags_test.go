package script

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/redistest"
)

var (
	drains = New("#!lua flags=allow-oom\nredis.call('SET', KEYS[1], ARGV[1])\nreturn 1\n")
	adds   = New("#!lua\nredis.call('XACK', KEYS[1], 'g', '0-1')\nredis.call('SET', KEYS[1], ARGV[1])\nreturn 1\n")
	errs   = New("#!lua\nreturn redis.error_reply('ERR line ' .. 'two')\n")
)

// On a server without shebang support (miniredis), Compat sends the scripts without it: on
// their own (EVALSHA, then EVAL) and in pipelines after a Load, and their errors keep their
// text.
func TestCompatOnMiniredis(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	_, err := drains.Run(ctx, rdb, []string{"k"}, "v").Result()
	require.Error(t, err, "without Compat miniredis cannot compile a shebang")

	Compat(rdb)
	Compat(rdb) // once per client
	n, err := drains.Run(ctx, rdb, []string{"k"}, "v").Int()
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	v, _ := m.Get("k")
	assert.Equal(t, "v", v)

	require.NoError(t, adds.Load(ctx, rdb).Err())
	cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range 3 {
			adds.EvalSha(ctx, p, []string{"k" + strconv.Itoa(i)}, "p")
		}
		return nil
	})
	require.NoError(t, err)
	assert.Len(t, cmds, 3)
	v, _ = m.Get("k2")
	assert.Equal(t, "p", v)

	err = errs.Run(ctx, rdb, nil).Err()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line two")
}

// On Redis, a script flagged allow-oom runs at maxmemory and one without the flag is refused
// before it runs, as a whole: its first command (XACK, which Redis takes at maxmemory) is not
// applied either. Compat changes nothing there.
func TestFlagsAtMaxmemory(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	Compat(rdb)
	ctx := context.Background()
	require.NoError(t, rdb.XGroupCreateMkStream(ctx, "s", "g", "0").Err())
	id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "0-1", Values: []any{"f", "v"}}).Result()
	require.NoError(t, err)
	require.NoError(t, rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"s", ">"}}).Err())
	fill(t, ctx, rdb)

	err = rdb.Set(ctx, "plain", "x", 0).Err()
	require.True(t, IsOOM(err), "Redis is full: %v", err)
	require.NoError(t, drains.Run(ctx, rdb, []string{"drains"}, "v").Err(), "allow-oom runs at maxmemory")
	err = adds.Run(ctx, rdb, []string{"s"}, "v").Err()
	require.True(t, IsOOM(err), "a script without allow-oom is refused: %v", err)
	pending, err := rdb.XPending(ctx, "s", "g").Result()
	require.NoError(t, err)
	assert.Equal(t, int64(1), pending.Count, "nothing of the refused script ran: %s is still pending", id)
}

// fill caps maxmemory at the used memory: every command that adds memory is refused.
func fill(t *testing.T, ctx context.Context, rdb *redis.Client) {
	info, err := rdb.Info(ctx, "memory").Result()
	require.NoError(t, err)
	var used string
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			used = v
		}
	}
	require.NoError(t, rdb.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	require.NoError(t, rdb.ConfigSet(ctx, "maxmemory", used).Err())
	t.Cleanup(func() { _ = rdb.ConfigSet(context.Background(), "maxmemory", "0").Err() })
}

// At maxmemory Redis refuses each write queued in a MULTI and answers the EXEC with
// EXECABORT; TxError gives the queued command's OOM instead, so IsOOM (and every caller's
// "Redis is full" handling) sees the real cause. Any other EXEC error is returned as is.
func TestTxErrorAtMaxmemory(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	fill(t, ctx, rdb)

	var set *redis.StatusCmd
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		set = p.Set(ctx, "k", strings.Repeat("x", 1024), 0)
		p.Get(ctx, "k")
		return nil
	})
	require.Error(t, err)
	require.True(t, redis.HasErrorPrefix(err, "EXECABORT"), "EXEC answers EXECABORT: %v", err)
	assert.False(t, IsOOM(err), "EXECABORT alone does not say why")
	got := TxError(err, set)
	assert.True(t, IsOOM(got), "the queued SET's OOM: %v", got)
	assert.Equal(t, set.Err(), got)
	assert.Equal(t, redis.Nil, rdb.Get(ctx, "k").Err(), "nothing of the transaction applied")

	other := redis.Nil
	assert.Equal(t, other, TxError(other, set), "not an EXECABORT: returned as is")
	assert.NoError(t, TxError(nil, set))
}
