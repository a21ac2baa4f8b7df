package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

func randomPayload(size int) []byte {
	p := make([]byte, size)
	_, _ = rand.Read(p)
	return p
}

func topicName(workload string, size int) string { return fmt.Sprintf("bench-%s-%d", workload, size) }

// publishThroughput: cfg.pubWorkers goroutines publish until n messages are confirmed or
// the budget is spent. Workload publish: streamq and redisstream one message per Publish
// call; go-redis a pipeline of 100 XADDs per round trip. Workload publish_batched: 100
// messages per Publish call for every transport, as a producer that can batch sends them.
func (e *env) publishThroughput(ctx context.Context, tr transport, size int, workload string) Result {
	n := e.cfg.pubN
	if tr.kind == kindRedisstream {
		n = e.cfg.pubNRedisstream
	}
	r := Result{Workload: workload, Size: size, Transport: tr.Name}
	topic := topicName(workload, size)
	s, err := e.newSender(tr, topic)
	if err != nil {
		return r.failed(err)
	}
	defer s.close()
	per := 1
	if tr.kind == kindGoRedis || workload == wPublishN {
		per = e.cfg.pipeline
	}
	payload := randomPayload(size)
	payloads := make([][]byte, per)
	for i := range payloads {
		payloads[i] = payload
	}

	win := e.startWindow(workload, tr, size)
	ctx, cancel := context.WithTimeout(ctx, e.cfg.pubBudget)
	defer cancel()
	var next, done, errCount atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	var lastNanos atomic.Int64
	for w := 0; w < e.cfg.pubWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				end := next.Add(int64(per))
				from := end - int64(per)
				if from >= int64(n) {
					return
				}
				k := int(min(end, int64(n)) - from)
				if err := s.send(ctx, payloads[:k]); err != nil {
					if ctx.Err() != nil {
						return
					}
					errCount.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				done.Add(int64(k))
				storeMax(&lastNanos, int64(time.Since(start)))
			}
		}()
	}
	wg.Wait()
	win.stop()
	elapsed := time.Duration(lastNanos.Load())
	if elapsed <= 0 {
		elapsed = time.Since(start)
	}
	r.Messages = done.Load()
	r.Seconds = elapsed.Seconds()
	r.set(float64(r.Messages) / elapsed.Seconds())
	if r.Messages < int64(n) {
		r.note(fmt.Sprintf("budget %s reached: %d of %d messages published", e.cfg.pubBudget, r.Messages, n))
	}
	if c := errCount.Load(); c > 0 {
		r.note(fmt.Sprintf("%d Publish errors, first: %v", c, firstErr.Load()))
	}
	win.attach(&r)
	return r
}

func storeMax(a *atomic.Int64, v int64) {
	for {
		cur := a.Load()
		if v <= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// subscribeThroughput consumes a prefilled backlog through a Router (go-redis: its own
// loop) and measures from the Router start to the last message handled.
func (e *env) subscribeThroughput(ctx context.Context, tr transport, size int) Result {
	n := e.cfg.subN
	if tr.kind == kindRedisstream {
		n = e.cfg.subNRedisstream
	}
	r := Result{Workload: wSubscribe, Size: size, Transport: tr.Name}
	topic := topicName("subscribe", size)
	// The backlog is what this transport will consume (fewer for watermill-redisstream).
	backlog := min(n, e.cfg.subBacklog)
	if err := e.prefill(ctx, tr, topic, backlog, randomPayload(size)); err != nil {
		return r.failed(err)
	}
	settle()
	res := e.consumeBacklog(ctx, tr, topic, backlog, e.cfg.subBudget, wSubscribe, size, nil)
	r.Messages, r.Seconds = res.handled, res.elapsed.Seconds()
	r.set(float64(res.handled) / res.elapsed.Seconds())
	r.Extra = map[string]float64{"first_message_s": res.first.Seconds(), "close_s": res.closeTime.Seconds(), "backlog": float64(backlog)}
	r.Notes = append(r.Notes, res.notes...)
	if res.err != nil {
		return r.failed(res.err)
	}
	res.win.attach(&r)
	return r
}

type consumeResult struct {
	handled   int64
	elapsed   time.Duration // start to the last message handled (or to the budget)
	first     time.Duration // start to the first message handled
	closeTime time.Duration
	notes     []string
	win       *window
	err       error // the consumer did not start
}

// consumeBacklog starts a consumer and waits until n messages were handled or budget passed.
func (e *env) consumeBacklog(ctx context.Context, tr transport, topic string, n int, budget time.Duration, workload string, size int, onStart func()) consumeResult {
	var res consumeResult
	var count atomic.Int64
	var firstNanos, lastNanos atomic.Int64
	all := make(chan struct{})
	var start time.Time
	handle := func([]byte) {
		switch c := count.Add(1); c {
		case 1:
			firstNanos.Store(int64(time.Since(start)))
			if n == 1 {
				lastNanos.Store(firstNanos.Load())
				close(all)
			}
		case int64(n):
			lastNanos.Store(int64(time.Since(start)))
			close(all)
		}
	}
	res.win = e.startWindow(workload, tr, size)
	if onStart != nil {
		onStart()
	}
	start = time.Now()
	cons, err := e.startConsumer(ctx, tr, topic, handle)
	if err != nil {
		res.win.stop()
		res.err = fmt.Errorf("start consumer: %w", err)
		return res
	}
	timer := time.NewTimer(budget)
	select {
	case <-all:
	case <-timer.C:
	case <-ctx.Done():
	}
	timer.Stop()
	hitBudget := count.Load() < int64(n)
	budgetAt := time.Since(start)
	res.win.stop()
	res.closeTime = cons.stop()
	res.handled = min(count.Load(), int64(n))
	res.first = time.Duration(firstNanos.Load())
	res.elapsed = time.Duration(lastNanos.Load())
	if hitBudget {
		res.elapsed = budgetAt
		res.notes = append(res.notes, fmt.Sprintf("budget %s reached: %d of %d messages handled", budget, count.Load(), n))
	}
	if res.closeTime > 2*time.Second {
		res.notes = append(res.notes, fmt.Sprintf("slow close: Router/Subscriber Close took %s", res.closeTime.Round(time.Millisecond)))
	}
	return res
}

// latency publishes at a fixed rate (stamping each payload with its send time) through a
// Router and records the end-to-end latency of every message of the measured window.
func (e *env) latency(ctx context.Context, tr transport, size int) []Result {
	base := Result{Size: size, Transport: tr.Name}
	fail := func(err error) []Result {
		a, b := base, base
		a.Workload, b.Workload = wLatencyP50, wLatencyP99
		return []Result{a.failed(err), b.failed(err)}
	}
	if size < 16 {
		return fail(fmt.Errorf("latency needs payloads of at least 16 bytes, got %d", size))
	}
	topic := topicName("latency", size)
	rate := e.cfg.latRate
	warmN := int(float64(rate) * e.cfg.latWarmup.Seconds())
	measN := int(float64(rate) * e.cfg.latDuration.Seconds())
	samples := make([]int64, measN) // latency in ns + 1; 0: not received
	var received, probes atomic.Int64
	const probeSeq = math.MaxUint64
	handle := func(p []byte) {
		now := time.Now().UnixNano()
		if len(p) < 16 {
			return
		}
		sent := int64(binary.LittleEndian.Uint64(p))
		seq := binary.LittleEndian.Uint64(p[8:])
		if seq == probeSeq {
			probes.Add(1)
			return
		}
		i := int(seq) - warmN
		if i < 0 || i >= measN {
			return
		}
		if atomic.CompareAndSwapInt64(&samples[i], 0, now-sent+1) {
			received.Add(1)
		}
	}
	cons, err := e.startConsumer(ctx, tr, topic, handle)
	if err != nil {
		return fail(err)
	}
	stopped := false
	stopCons := func() time.Duration {
		if stopped {
			return 0
		}
		stopped = true
		return cons.stop()
	}
	defer stopCons()
	s, err := e.newSender(tr, topic)
	if err != nil {
		return fail(err)
	}
	defer s.close()
	stamp := func(seq uint64) []byte {
		p := make([]byte, size)
		binary.LittleEndian.PutUint64(p[8:], seq)
		binary.LittleEndian.PutUint64(p, uint64(time.Now().UnixNano()))
		return p
	}
	// Wait until the consumer delivers: probes every 20 ms, up to 30 s.
	probeStart := time.Now()
	for probes.Load() == 0 {
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		if time.Since(probeStart) > 30*time.Second {
			return fail(fmt.Errorf("no probe message delivered within 30s"))
		}
		_ = s.send(ctx, [][]byte{stamp(probeSeq)})
		time.Sleep(20 * time.Millisecond)
	}
	ready := time.Since(probeStart)

	win := e.startWindow("latency", tr, size)
	total := warmN + measN
	jobs := make(chan uint64, 4096)
	var pubErrs atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for w := 0; w < e.cfg.latPublishers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			one := make([][]byte, 1)
			for seq := range jobs {
				one[0] = stamp(seq)
				if err := s.send(ctx, one); err != nil && ctx.Err() == nil {
					pubErrs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}
		}()
	}
	// Pacer: message i is due at start + i/rate; it is stamped when a publisher takes it.
	start := time.Now()
	interval := time.Second / time.Duration(rate)
	behind := time.Duration(0)
	for i := 0; i < total && ctx.Err() == nil; i++ {
		due := start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 50*time.Microsecond {
			time.Sleep(d)
		}
		select {
		case jobs <- uint64(i):
		case <-ctx.Done():
		}
		if lag := time.Since(due); lag > behind {
			behind = lag
		}
	}
	close(jobs)
	wg.Wait()
	pubElapsed := time.Since(start)
	// Drain: wait for the measured messages.
	drainStart := time.Now()
	for received.Load() < int64(measN) && time.Since(drainStart) < e.cfg.latDrain && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	win.stop()
	closeTime := stopCons()

	got := received.Load()
	lat := make([]int64, 0, got)
	for _, v := range samples {
		if v > 0 {
			lat = append(lat, v-1)
		}
	}
	slices.Sort(lat)
	// Percentiles over every measured message; one never received counts as infinite.
	pct := func(q float64) (float64, bool) {
		idx := int(math.Ceil(q*float64(measN))) - 1
		idx = max(idx, 0)
		if idx >= len(lat) {
			return 0, false
		}
		return float64(lat[idx]) / 1e6, true
	}
	extra := map[string]float64{
		"rate_target":          float64(rate),
		"rate_achieved":        float64(total) / pubElapsed.Seconds(),
		"received":             float64(got),
		"measured":             float64(measN),
		"publisher_max_lag_ms": float64(behind) / 1e6,
		"ready_s":              ready.Seconds(),
		"close_s":              closeTime.Seconds(),
	}
	for _, q := range []struct {
		name string
		q    float64
	}{{"p50_ms", 0.5}, {"p90_ms", 0.9}, {"p99_ms", 0.99}, {"p999_ms", 0.999}} {
		if v, ok := pct(q.q); ok {
			extra[q.name] = v
		}
	}
	if len(lat) > 0 {
		extra["max_ms"] = float64(lat[len(lat)-1]) / 1e6
	}
	var notes []string
	if missing := int64(measN) - got; missing > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d messages not delivered within the %s drain (counted as infinite latency)", missing, measN, e.cfg.latDrain))
	}
	if achieved := float64(total) / pubElapsed.Seconds(); achieved < 0.95*float64(rate) {
		notes = append(notes, fmt.Sprintf("publishers could not keep the rate: %.0f msg/s of %d", achieved, rate))
	}
	if c := pubErrs.Load(); c > 0 {
		notes = append(notes, fmt.Sprintf("%d Publish errors, first: %v", c, firstErr.Load()))
	}
	if closeTime > 2*time.Second {
		notes = append(notes, fmt.Sprintf("slow close: %s", closeTime.Round(time.Millisecond)))
	}
	var out []Result
	for _, w := range []struct {
		workload string
		q        float64
	}{{wLatencyP50, 0.5}, {wLatencyP99, 0.99}} {
		r := base
		r.Workload = w.workload
		r.Messages = got
		r.Seconds = e.cfg.latDuration.Seconds()
		r.Extra = extra
		r.Notes = append([]string(nil), notes...)
		win.attach(&r)
		if v, ok := pct(w.q); ok {
			r.set(v)
		} else {
			r.note(fmt.Sprintf("p%g not reached: fewer than %g%% of messages delivered", w.q*100, w.q*100))
		}
		out = append(out, r)
	}
	return out
}

// memory consumes a large prefilled backlog through a Router, sampling HeapInuse and VmRSS
// every 100 ms; it reports the maxima (and the baselines before the Router started).
func (e *env) memory(ctx context.Context, tr transport, size int) []Result {
	base := Result{Size: size, Transport: tr.Name}
	fail := func(err error) []Result {
		a, b := base, base
		a.Workload, b.Workload = wHeap, wRSS
		return []Result{a.failed(err), b.failed(err)}
	}
	topic := topicName("memory", size)
	fillStart := time.Now()
	if err := e.prefill(ctx, tr, topic, e.cfg.memBacklog, randomPayload(size)); err != nil {
		return fail(err)
	}
	fill := time.Since(fillStart)
	var sampler *memSampler
	var baseHeap, baseRSS uint64
	res := e.consumeBacklog(ctx, tr, topic, e.cfg.memBacklog, e.cfg.memBudget, "memory", size, func() {
		// The publisher's garbage must not count: collect and return it to the OS first.
		settle()
		baseHeap, baseRSS = heapInuse(), rss()
		sampler = startMemSampler(100 * time.Millisecond)
	})
	if sampler != nil && res.err != nil {
		sampler.stop()
	}
	if res.err != nil {
		return fail(res.err)
	}
	maxHeap, maxRSS, n := sampler.stop()
	firstHalf, secondHalf := sampler.halves()
	extra := map[string]float64{
		"backlog":                  float64(e.cfg.memBacklog),
		"handled":                  float64(res.handled),
		"consume_s":                res.elapsed.Seconds(),
		"consume_msg_per_s":        float64(res.handled) / res.elapsed.Seconds(),
		"prefill_s":                fill.Seconds(),
		"baseline_heap_mib":        mib(baseHeap),
		"baseline_rss_mib":         mib(baseRSS),
		"samples":                  float64(n),
		"heap_max_first_half_mib":  mib(firstHalf),
		"heap_max_second_half_mib": mib(secondHalf),
	}
	h, r := base, base
	h.Workload, r.Workload = wHeap, wRSS
	for _, x := range []*Result{&h, &r} {
		x.Messages, x.Seconds, x.Extra, x.Notes = res.handled, res.elapsed.Seconds(), extra, append([]string(nil), res.notes...)
		res.win.attach(x)
	}
	if secondHalf > firstHalf+firstHalf/2+2<<20 {
		h.note(fmt.Sprintf("heap grows while consuming: max %.1f MiB in the first half of the window, %.1f MiB in the second", mib(firstHalf), mib(secondHalf)))
	}
	h.set(mib(maxHeap))
	r.set(mib(maxRSS))
	return []Result{h, r}
}

// settle collects garbage and returns free memory to the OS now, so that the background
// scavenger does not do it inside the next measured window.
func settle() {
	runtime.GC()
	debug.FreeOSMemory()
}
