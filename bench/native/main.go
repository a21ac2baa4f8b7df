// Command native measures a server's native stream and key commands against the Lua steps
// streamq runs for the same job, on one server, side by side: the Redis CPU per call (INFO
// commandstats) and the calls per second of pipelined callers. It also checks which of them a
// server at maxmemory still runs (streamq's lease and ack steps are allow-oom scripts).
//
//	cd bench && go run ./native --addr 127.0.0.1:7393
//
// The server is flushed: give it a server of its own, without persistence (redis-server
// --port 7393 --appendonly no).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The Lua steps, as streamq's scripts run them (internal/lease/lua/renew.lua and release.lua;
// the XADD loop of internal/publish/lua/appendseq.lua's fast path; the XACK and XDEL of an ack
// with the immediate delete policy).
const (
	renewLua   = "#!lua flags=allow-oom\nif redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end return 0"
	releaseLua = "#!lua flags=allow-oom\nif redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end return 0"
	xaddLoop   = "local out = {} for i = 1, #ARGV, 3 do out[#out + 1] = redis.call('XADD', KEYS[1], '*', '_uuid', ARGV[i], '_meta', ARGV[i + 1], '_payload', ARGV[i + 2]) end return out"
	ackDelLua  = "#!lua flags=allow-oom\nredis.call('XACK', KEYS[1], ARGV[1], unpack(ARGV, 2)) return redis.call('XDEL', KEYS[1], unpack(ARGV, 2))"
)

type bench struct {
	rdb     *redis.Client
	callers int
	batch   int
}

func main() {
	addr := flag.String("addr", "127.0.0.1:7393", "the server to measure (flushed)")
	n := flag.Int("n", 200_000, "calls (messages for the append rows) per row")
	callers := flag.Int("callers", 8, "concurrent callers, each sending pipelines")
	batch := flag.Int("pipeline", 26, "calls per pipeline (the default publish's pipelines carry about 26 messages)")
	size := flag.Int("size", 256, "payload bytes of the append rows")
	flag.Parse()
	b := &bench{rdb: redis.NewClient(&redis.Options{Addr: *addr, PoolSize: 4 * *callers}), callers: *callers, batch: *batch}
	ctx := context.Background()
	if err := b.rdb.Ping(ctx).Err(); err != nil {
		fmt.Fprintln(os.Stderr, "native:", err)
		os.Exit(2)
	}
	fmt.Println("server:", serverVersion(ctx, b.rdb))
	fmt.Println("row | calls/s | Redis µs per call (commandstats) | note")
	b.leases(ctx, *n)
	b.appends(ctx, *n, *size)
	b.acks(ctx, *n/100)
	b.atMaxmemory(ctx)
}

// leases: renew with the script and with SET ... IFEQ; release with the script and DELEX ... IFEQ.
func (b *bench) leases(ctx context.Context, n int) {
	b.flush(ctx)
	for i := range 1000 {
		b.rdb.Set(ctx, leaseKey(i), "token", time.Minute)
	}
	renew, release := redis.NewScript(renewLua), redis.NewScript(releaseLua)
	b.row(ctx, "renew, renew.lua", n, []string{"evalsha"}, func(p redis.Pipeliner, i int) {
		renew.EvalSha(ctx, p, []string{leaseKey(i % 1000)}, "token", 60000)
	}, func() { renew.Load(ctx, b.rdb) })
	b.row(ctx, "renew, SET IFEQ PX", n, []string{"set"}, func(p redis.Pipeliner, i int) {
		p.Do(ctx, "SET", leaseKey(i%1000), "token", "IFEQ", "token", "PX", 60000)
	}, nil)
	fill := func(p redis.Pipeliner, i int) { p.Set(ctx, leaseKey(i), "token", time.Minute) }
	b.row(ctx, "release, release.lua", n, []string{"evalsha"}, func(p redis.Pipeliner, i int) {
		fill(p, i)
		release.EvalSha(ctx, p, []string{leaseKey(i)}, "token")
	}, func() { release.Load(ctx, b.rdb) })
	b.row(ctx, "release, DELEX IFEQ", n, []string{"delex"}, func(p redis.Pipeliner, i int) {
		fill(p, i)
		p.Do(ctx, "DELEX", leaseKey(i), "IFEQ", "token")
	}, nil)
}

// appends: plain XADD, XADD IDMP (one producer a caller, its sequence number the id), and a
// Lua loop of XADDs (the default idempotent append's fast path, without its record).
func (b *bench) appends(ctx context.Context, n, size int) {
	payload := strings.Repeat("x", size)
	b.flush(ctx)
	b.row(ctx, "append, XADD", n, []string{"xadd"}, func(p redis.Pipeliner, i int) {
		p.Do(ctx, "XADD", streamKey(i), "*", "_uuid", "u", "_meta", "{}", "_payload", payload)
	}, nil)
	b.flush(ctx)
	for s := range 8 {
		b.rdb.XAdd(ctx, &redis.XAddArgs{Stream: streamKey(s), Values: []any{"a", "b"}})
		if err := b.rdb.Do(ctx, "XCFGSET", streamKey(s), "IDMP-DURATION", 120, "IDMP-MAXSIZE", 10000).Err(); err != nil {
			fmt.Println("append, XADD IDMP | - | - | not on this server:", err)
			break
		}
	}
	b.row(ctx, "append, XADD IDMP", n, []string{"xadd"}, func(p redis.Pipeliner, i int) {
		p.Do(ctx, "XADD", streamKey(i), "IDMP", "producer", strconv.Itoa(i), "*", "_uuid", "u", "_meta", "{}", "_payload", payload)
	}, nil)
	b.flush(ctx)
	loop := redis.NewScript(xaddLoop)
	b.rowBatched(ctx, "append, Lua loop of XADD", n, func(p redis.Pipeliner, first, k int) {
		args := make([]any, 0, 3*k)
		for range k {
			args = append(args, "u", "{}", payload)
		}
		loop.EvalSha(ctx, p, []string{streamKey(first)}, args...)
	}, func() { loop.Load(ctx, b.rdb) })
}

// acks: acking and deleting 100 entries at a time, with XACK and XDEL in a script and with
// XACKDEL (per entry).
func (b *bench) acks(ctx context.Context, batches int) {
	const per = 100
	ackDel := redis.NewScript(ackDelLua)
	for _, native := range []bool{false, true} {
		b.flush(ctx)
		ids := b.pending(ctx, batches*per)
		name, cmd := "ack+delete 100, XACK and XDEL in a script", "evalsha"
		if native {
			name, cmd = "ack+delete 100, XACKDEL", "xackdel"
		}
		b.row(ctx, name, batches, []string{cmd}, func(p redis.Pipeliner, i int) {
			chunk := ids[i*per : (i+1)*per]
			if native {
				args := append([]any{"XACKDEL", "acks", "g", "IDS", per}, toAny(chunk)...)
				p.Do(ctx, args...)
				return
			}
			ackDel.EvalSha(ctx, p, []string{"acks"}, append([]any{"g"}, toAny(chunk)...)...)
		}, func() { ackDel.Load(ctx, b.rdb) })
	}
}

// pending appends n entries and reads them into group g's pending list; their ids.
func (b *bench) pending(ctx context.Context, n int) []string {
	p := b.rdb.Pipeline()
	for range n {
		p.XAdd(ctx, &redis.XAddArgs{Stream: "acks", Values: []any{"f", "v"}})
	}
	_, _ = p.Exec(ctx)
	b.rdb.XGroupCreate(ctx, "acks", "g", "0")
	var ids []string
	for len(ids) < n {
		res, err := b.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"acks", ">"}, Count: 10000}).Result()
		if err != nil || len(res[0].Messages) == 0 {
			break
		}
		for _, m := range res[0].Messages {
			ids = append(ids, m.ID)
		}
	}
	return ids
}

// atMaxmemory says which lease steps a server at maxmemory still runs.
func (b *bench) atMaxmemory(ctx context.Context) {
	b.flush(ctx)
	b.rdb.Set(ctx, leaseKey(0), "token", time.Minute)
	b.rdb.Set(ctx, "ballast", strings.Repeat("x", 1<<20), 0)
	b.rdb.ConfigSet(ctx, "maxmemory", "1")
	defer b.rdb.ConfigSet(ctx, "maxmemory", "0")
	report := func(what string, err error) {
		if err == nil || errors.Is(err, redis.Nil) {
			fmt.Printf("at maxmemory: %s runs\n", what)
			return
		}
		fmt.Printf("at maxmemory: %s refused: %v\n", what, err)
	}
	report("renew.lua", redis.NewScript(renewLua).Run(ctx, b.rdb, []string{leaseKey(0)}, "token", 60000).Err())
	report("SET IFEQ PX (renew)", b.rdb.Do(ctx, "SET", leaseKey(0), "token", "IFEQ", "token", "PX", 60000).Err())
	report("DELEX IFEQ (release)", b.rdb.Do(ctx, "DELEX", leaseKey(0), "IFEQ", "token").Err())
}

// row runs n calls of one, from b.callers callers in pipelines of b.batch, after prepare, and
// prints the rate and the Redis µs per call of the commands named.
func (b *bench) row(ctx context.Context, name string, n int, cmds []string, one func(redis.Pipeliner, int), prepare func()) {
	b.rowBatched(ctx, name, n, func(p redis.Pipeliner, first, k int) {
		for i := first; i < first+k; i++ {
			one(p, i)
		}
	}, prepare, cmds...)
}

// rowBatched is row with one function filling each pipeline: k calls from first.
func (b *bench) rowBatched(ctx context.Context, name string, n int, fill func(p redis.Pipeliner, first, k int), prepare func(), cmds ...string) {
	if prepare != nil {
		prepare()
	}
	if len(cmds) == 0 {
		cmds = []string{"evalsha"}
	}
	b.rdb.ConfigResetStat(ctx)
	var wg sync.WaitGroup
	var failed error
	var mu sync.Mutex
	start := time.Now()
	per := n / b.callers
	for c := range b.callers {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := c * per; i < (c+1)*per; i += b.batch {
				k := min(b.batch, (c+1)*per-i)
				p := b.rdb.Pipeline()
				fill(p, i, k)
				if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
					mu.Lock()
					failed = err
					mu.Unlock()
					return
				}
			}
		}(c)
	}
	wg.Wait()
	elapsed := time.Since(start)
	if failed != nil {
		fmt.Printf("%s | - | - | failed: %v\n", name, failed)
		return
	}
	usec, calls := b.commandStats(ctx, cmds)
	perCall := usec / float64(n)
	note := fmt.Sprintf("%d %s calls", calls, strings.Join(cmds, "+"))
	fmt.Printf("%s | %.0f | %.2f | %s\n", name, float64(n)/elapsed.Seconds(), perCall, note)
}

// commandStats sums usec and calls of the commands in INFO commandstats.
func (b *bench) commandStats(ctx context.Context, cmds []string) (float64, int64) {
	info := b.rdb.Info(ctx, "commandstats").Val()
	var usec float64
	var calls int64
	for _, line := range strings.Split(info, "\n") {
		for _, c := range cmds {
			rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+c+":")
			if !ok {
				continue
			}
			for _, kv := range strings.Split(rest, ",") {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "usec":
					f, _ := strconv.ParseFloat(v, 64)
					usec += f
				case "calls":
					x, _ := strconv.ParseInt(v, 10, 64)
					calls += x
				}
			}
		}
	}
	return usec, calls
}

func (b *bench) flush(ctx context.Context) { b.rdb.FlushAll(ctx) }

func leaseKey(i int) string  { return "lease:" + strconv.Itoa(i) }
func streamKey(i int) string { return "s" + strconv.Itoa(i%8) }

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func serverVersion(ctx context.Context, rdb *redis.Client) string {
	info := rdb.Info(ctx, "server").Val()
	var out []string
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "redis_version:") || strings.HasPrefix(line, "valkey_version:") {
			out = append(out, line)
		}
	}
	return strings.Join(out, " ")
}
