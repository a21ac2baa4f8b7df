package publish

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/retry"
	"github.com/streamq-dev/streamq/internal/script"
)

// scripts remembers which of the scripts a pipeline sends by SHA were loaded on the server:
// once loaded they are not loaded again, unless a NOSCRIPT says a server lost them.
type scripts struct{ park, append atomic.Bool }

// load caches the scripts a pipeline sends by SHA on the server before it is sent: the delay
// script for batches that park a delayed message, the idempotent append for batches that
// append idempotently. The offload script needs no load: it is sent as EVAL with its text
// (see internal/script). force loads them again.
func (s *scripts) load(ctx context.Context, rdb redis.UniversalClient, writes []Write, force bool) error {
	var park, once bool
	for _, w := range writes {
		park = park || w.Park != nil
		once = once || ((w.Once != nil || w.Seq != nil) && w.Park == nil)
	}
	if err := loadOnce(park, force, &s.park, func() error { return retry.LoadScripts(ctx, rdb) }); err != nil {
		return err
	}
	return loadOnce(once, force, &s.append, func() error { return LoadScripts(ctx, rdb) })
}

// loadOnce runs load when needed and not done before (or force), and remembers it in done.
func loadOnce(needed, force bool, done *atomic.Bool, load func() error) error {
	if !needed || (!force && done.Load()) {
		return nil
	}
	if err := load(); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	done.Store(true)
	return nil
}

// retryNoScript sends again, once, the script writes a server refused with NOSCRIPT (a
// restarted or failed-over node has an empty script cache), after loading the scripts there.
// Plain appends that succeeded are not sent again. Under Replicas the first pipeline's
// verdict stands when it failed: its WAIT covered the writes that are not sent again.
func (e *Engine) retryNoScript(ctx context.Context, writes []Write, res flushed, g giveUp) (flushed, error) {
	var idx []int
	for i, r := range res.results {
		if script.IsNoScript(r.Err()) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return res, nil
	}
	again := make([]Write, len(idx))
	for j, i := range idx {
		again[j] = writes[i]
	}
	if err := e.scripts.load(ctx, e.cfg.Client, again, true); err != nil {
		return flushed{}, err
	}
	second, err := e.batch.submit(ctx, again, g)
	if err != nil {
		return flushed{}, err
	}
	for j, i := range idx {
		res.results[i] = second.results[j]
	}
	if res.replicated == nil {
		res.replicated = second.replicated
	}
	return res, nil
}
