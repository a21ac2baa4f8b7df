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
	"maps"
	"os"
	"slices"
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
	valkey  bool // Valkey names some commands differently (DELIFEQ for DELEX IFEQ)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:7393", "the server to measure (flushed)")
	n := flag.Int("n", 200_000, "calls (messages for the append rows) per row")
	callers := flag.Int("callers", 8, "concurrent callers, each sending pipelines")
	batch := flag.Int("pipeline", 26, "calls per pipeline (the default publish's pipelines carry about 26 messages)")
	size := flag.Int("size", 256, "payload bytes of the append and claim rows")
	reps := flag.Int("reps", 5, "times each claim row runs, alternating with the rows it is compared with")
	flag.Parse()
	b := &bench{rdb: redis.NewClient(&redis.Options{Addr: *addr, PoolSize: 4 * *callers}), callers: *callers, batch: *batch}
	ctx := context.Background()
	if err := b.rdb.Ping(ctx).Err(); err != nil {
		fmt.Fprintln(os.Stderr, "native:", err)
		os.Exit(2)
	}
	version := serverVersion(ctx, b.rdb)
	b.valkey = strings.Contains(version, "valkey_version:")
	fmt.Println("server:", version)
	fmt.Println("row | calls/s | Redis µs per call (commandstats) | note")
	b.leases(ctx, *n)
	b.appends(ctx, *n, *size)
	b.acks(ctx, *n/100)
	b.claims(ctx, *n/100, *size, *reps)
	b.atMaxmemory(ctx)
}

// leases: renew with the script and with SET ... IFEQ; release with the script and DELEX ... IFEQ
// (DELIFEQ on Valkey).
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
	if b.valkey {
		b.row(ctx, "release, DELIFEQ", n, []string{"delifeq"}, func(p redis.Pipeliner, i int) {
			fill(p, i)
			p.Do(ctx, "DELIFEQ", leaseKey(i), "token")
		}, nil)
		return
	}
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
	idmp := true
	for s := range 8 {
		b.rdb.XAdd(ctx, &redis.XAddArgs{Stream: streamKey(s), Values: []any{"a", "b"}})
		if err := b.rdb.Do(ctx, "XCFGSET", streamKey(s), "IDMP-DURATION", 120, "IDMP-MAXSIZE", 10000).Err(); err != nil {
			fmt.Println("append, XADD IDMP | - | - | not on this server:", err)
			idmp = false
			break
		}
	}
	if idmp {
		b.row(ctx, "append, XADD IDMP", n, []string{"xadd"}, func(p redis.Pipeliner, i int) {
			p.Do(ctx, "XADD", streamKey(i), "IDMP", "producer", strconv.Itoa(i), "*", "_uuid", "u", "_meta", "{}", "_payload", payload)
		}, nil)
	}
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

// claimIdle is the min-idle of the claims, in ms: Reclaim.Idle's default.
const claimIdle = 60000

// claims: XREADGROUP ... CLAIM min-idle (Redis 8.4) against streamq's plain read and
// XAUTOCLAIM, on one stream a caller, in batches of 100 entries. reads is the number of
// XREADGROUPs (of 100 entries) per row. The variants of a comparison alternate, reps times
// each (a shared machine's load moves between rows), and their medians are printed after.
//
// Reading new entries: plain XREADGROUP against XREADGROUP ... CLAIM, each read acked in
// the same pipeline (XACK, not counted), with a pending list of 0, 1,000 and 10,000 entries
// a stream that another consumer read at setup, not idle yet: what CLAIM adds to every read.
//
// Reclaiming 100 entries idle for an hour (XCLAIM IDLE at setup), in pipelines of 1, each
// caller waiting for every reply, as a reclaim does: XAUTOCLAIM (from the cursor of the
// last) then XREADGROUP, as streamq's safety-net scan and the next read round do; the same
// with the XPENDING streamq sends after each claimed batch for its delivery counts; and one
// XREADGROUP ... CLAIM, whose reply carries them.
//
// After each row the pending lists are checked: a line says so if a row claimed entries it
// should not have or left some it should have claimed.
func (b *bench) claims(ctx context.Context, reads, size, reps int) {
	b.flush(ctx)
	b.rdb.XGroupCreateMkStream(ctx, "probe", "g", "0")
	if err := b.rdb.Do(ctx, "XREADGROUP", "GROUP", "g", "c", "COUNT", 1, "CLAIM", claimIdle, "STREAMS", "probe", ">").Err(); err != nil && !errors.Is(err, redis.Nil) {
		fmt.Println("XREADGROUP CLAIM | - | - | not on this server:", err)
		return
	}
	payload := strings.Repeat("x", size)
	summary := append(b.readsWithClaim(ctx, reads, payload, reps), b.reclaims(ctx, reads, payload, reps))
	for _, l := range summary {
		fmt.Println("median of", reps, "|", l)
	}
}

// readsWithClaim runs the reads of new entries, plain and with CLAIM, over pending lists of
// 0, 1,000 and 10,000 entries not idle yet; it returns a summary line for each.
func (b *bench) readsWithClaim(ctx context.Context, reads int, payload string, reps int) []string {
	per := reads / b.callers // reads a caller: caller c reads claimKey(c)
	var summary []string
	for _, pel := range []int{0, 1000, 10000} {
		got := map[bool][]float64{}
		for range reps {
			for _, claim := range []bool{false, true} {
				b.flush(ctx)
				b.claimStreams(ctx, pel, per*100, payload, false)
				name := fmt.Sprintf("read 100 new, %d pending not idle, XREADGROUP", pel)
				if claim {
					name += " CLAIM"
				}
				got[claim] = append(got[claim], b.row(ctx, name, reads, []string{"xreadgroup"}, func(p redis.Pipeliner, i int) {
					c, j := i/per, i%per
					args := []any{"XREADGROUP", "GROUP", "g", "c", "COUNT", 100}
					if claim {
						args = append(args, "CLAIM", claimIdle)
					}
					p.Do(ctx, append(args, "STREAMS", claimKey(c), ">")...)
					ids := make([]string, 100)
					for k := range ids {
						ids[k] = "1-" + strconv.Itoa(pel+j*100+k+1)
					}
					p.XAck(ctx, claimKey(c), "g", ids...)
				}, nil))
				b.pelCheck(ctx, map[string]int64{"other": int64(pel * b.callers)})
			}
		}
		plain, claim := median(got[false]), median(got[true])
		summary = append(summary, fmt.Sprintf("read 100 new, %d pending not idle: XREADGROUP %.2f, XREADGROUP CLAIM %.2f µs (%+.0f %%)",
			pel, plain, claim, 100*(claim/plain-1)))
	}
	return summary
}

// reclaims runs the reclaims of 100 idle entries, each caller waiting for every reply, the
// three ways; it returns the summary line.
func (b *bench) reclaims(ctx context.Context, reads int, payload string, reps int) string {
	per := reads / b.callers
	batch := b.batch
	b.batch = 1
	defer func() { b.batch = batch }()
	hows := []string{"XAUTOCLAIM + XREADGROUP", "XAUTOCLAIM + XPENDING + XREADGROUP", "XREADGROUP CLAIM"}
	cmds := map[string][]string{
		hows[0]: {"xautoclaim", "xreadgroup"},
		hows[1]: {"xautoclaim", "xpending", "xreadgroup"},
		hows[2]: {"xreadgroup"},
	}
	got := map[string][]float64{}
	for range reps {
		for _, how := range hows {
			b.flush(ctx)
			b.claimStreams(ctx, per*100, 0, payload, true)
			cursor := make([]string, b.callers)
			for c := range cursor {
				cursor[c] = "0-0"
			}
			got[how] = append(got[how], b.row(ctx, "reclaim 100 idle, "+how, reads, cmds[how], func(p redis.Pipeliner, i int) {
				c, key := i/per, claimKey(i/per)
				if how == hows[2] {
					p.Do(ctx, "XREADGROUP", "GROUP", "g", "c", "COUNT", 100, "CLAIM", claimIdle, "STREAMS", key, ">")
					return
				}
				msgs, next, err := b.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{
					Stream: key, Group: "g", Consumer: "c", MinIdle: claimIdle * time.Millisecond, Start: cursor[c], Count: 100,
				}).Result()
				if err != nil {
					fmt.Println("XAUTOCLAIM:", err)
				}
				cursor[c] = next
				if len(msgs) > 0 && how == hows[1] {
					b.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{
						Stream: key, Group: "g", Start: msgs[0].ID, End: msgs[len(msgs)-1].ID, Count: int64(len(msgs)),
					})
				}
				p.Do(ctx, "XREADGROUP", "GROUP", "g", "c", "COUNT", 100, "STREAMS", key, ">")
			}, nil))
			b.pelCheck(ctx, map[string]int64{"c": int64(per * 100 * b.callers)})
		}
	}
	line := "reclaim 100 idle:"
	for _, how := range hows {
		line += fmt.Sprintf(" %s %.2f µs;", how, median(got[how]))
	}
	return strings.TrimSuffix(line, ";")
}

// pelCheck says if the claim streams' pending lists are not what want says each consumer
// holds (a consumer not named holds none).
func (b *bench) pelCheck(ctx context.Context, want map[string]int64) {
	held := map[string]int64{}
	for c := range b.callers {
		res, err := b.rdb.XPending(ctx, claimKey(c), "g").Result()
		if err != nil {
			fmt.Println("  pending:", err)
			return
		}
		for name, n := range res.Consumers {
			held[name] += n
		}
	}
	maps.DeleteFunc(want, func(_ string, n int64) bool { return n == 0 }) // held lists no empty consumer
	if !maps.Equal(held, want) {
		fmt.Printf("  pending after the row: %v, want %v\n", held, want)
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// claimStreams makes one stream a caller, claimKey(c): pending entries (ids 1-1 to 1-pending)
// that a consumer read, and fresh entries after them no consumer read yet. The pending ones
// are read by "other" now (not idle), or, idle, by "dead", idle for an hour since.
func (b *bench) claimStreams(ctx context.Context, pending, fresh int, payload string, idle bool) {
	owner := "other"
	if idle {
		owner = "dead"
	}
	for c := range b.callers {
		key := claimKey(c)
		p := b.rdb.Pipeline()
		for k := 1; k <= pending+fresh; k++ {
			p.XAdd(ctx, &redis.XAddArgs{Stream: key, ID: "1-" + strconv.Itoa(k), Values: []any{"_uuid", "u", "_meta", "{}", "_payload", payload}})
			if k%10000 == 0 {
				_, _ = p.Exec(ctx)
			}
		}
		_, _ = p.Exec(ctx)
		b.rdb.XGroupCreate(ctx, key, "g", "0")
		for read := 0; read < pending; read += 10000 {
			b.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: owner, Streams: []string{key, ">"}, Count: int64(min(10000, pending-read))})
		}
		if !idle {
			continue
		}
		for k := 1; k <= pending; k += 1000 {
			args := []any{"XCLAIM", key, "g", owner, 0}
			for id := k; id < min(k+1000, pending+1); id++ {
				args = append(args, "1-"+strconv.Itoa(id))
			}
			b.rdb.Do(ctx, append(args, "IDLE", 3_600_000, "JUSTID")...)
		}
	}
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
	if b.valkey {
		report("DELIFEQ (release)", b.rdb.Do(ctx, "DELIFEQ", leaseKey(0), "token").Err())
		return
	}
	report("DELEX IFEQ (release)", b.rdb.Do(ctx, "DELEX", leaseKey(0), "IFEQ", "token").Err())
}

// row runs n calls of one, from b.callers callers in pipelines of b.batch, after prepare, and
// prints the rate and the Redis µs per call of the commands named.
func (b *bench) row(ctx context.Context, name string, n int, cmds []string, one func(redis.Pipeliner, int), prepare func()) float64 {
	return b.rowBatched(ctx, name, n, func(p redis.Pipeliner, first, k int) {
		for i := first; i < first+k; i++ {
			one(p, i)
		}
	}, prepare, cmds...)
}

// rowBatched is row with one function filling each pipeline: k calls from first. Both return
// the Redis µs per call (0 if the row failed).
func (b *bench) rowBatched(ctx context.Context, name string, n int, fill func(p redis.Pipeliner, first, k int), prepare func(), cmds ...string) float64 {
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
		return 0
	}
	usec, calls := b.commandStats(ctx, cmds)
	perCall := usec / float64(n)
	note := fmt.Sprintf("%d %s calls", calls, strings.Join(cmds, "+"))
	fmt.Printf("%s | %.0f | %.2f | %s\n", name, float64(n)/elapsed.Seconds(), perCall, note)
	return perCall
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
func claimKey(c int) string  { return "claim:" + strconv.Itoa(c) }

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
