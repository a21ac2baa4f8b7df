package script

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/server"
)

// Every script starts with a shebang line that states how it behaves on a full Redis
// (Redis 7's script flags; Valkey has them too):
//
//   - "#!lua flags=allow-oom": a step a consumer needs to drain (leases, membership, acks,
//     retries and dead letters that ack their original, trims). It runs at maxmemory, and
//     its writes are bounded: a lease, a heartbeat, a frontier, one copy of a message whose
//     original it frees.
//   - "#!lua": a step that adds data (an append, a delayed publish, a topic's registration,
//     a replay). At maxmemory Redis refuses it before it runs, as a whole: nothing of it is
//     written, and the caller gets the OOM error.
//
// A script without a shebang would run at maxmemory until its first command that adds memory,
// which Redis refuses unless the script wrote before: its outcome would depend on the order of
// its commands.

// New returns the script of src, a text that starts with a shebang line, and registers it for
// Compat.
func New(src string) *redis.Script {
	s := redis.NewScript(src)
	if body, ok := strings.CutPrefix(src, "#!"); ok {
		_, plain, _ := strings.Cut(body, "\n")
		plain = "\n" + plain // one line less would shift every line number of an error
		registry.Store(s.Hash(), plain)
		registry.Store(src, plain)
	}
	return s
}

// registry maps a flagged script's SHA1 and its text to the same text without its shebang.
var registry sync.Map

// plainOf returns the shebang-less text of the registered script that arg names (a SHA1) or
// is (a text).
func plainOf(arg any) (string, bool) {
	s, ok := arg.(string)
	if !ok {
		return "", false
	}
	plain, ok := registry.Load(s)
	if !ok {
		return "", false
	}
	return plain.(string), true
}

// Compat makes rdb work with a server that cannot read shebang lines (miniredis, which serves
// the demo, the examples and unit tests): once such a server refuses to compile a script of
// New, every script sent over rdb goes without its shebang, as EVAL of its text. On Redis and
// Valkey it changes nothing. It is installed once per client; calling it again is free.
func Compat(rdb redis.UniversalClient) {
	if rdb == nil {
		return
	}
	compatOnce(rdb)
}

type hookHolder struct{ once sync.Once }

func compatOnce(rdb redis.UniversalClient) {
	h := server.PerClient(rdb, "script-compat", func() *hookHolder { return &hookHolder{} })
	h.once.Do(func() { rdb.AddHook(&compatHook{}) })
}

// compatHook rewrites scripts of New for a server without shebang support, once it has seen
// one refused.
type compatHook struct{ plain atomic.Bool }

func (*compatHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *compatHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.plain.Load() {
			strip(cmd)
			return next(ctx, cmd)
		}
		err := next(ctx, cmd)
		if err != nil && refusedShebang(cmd, err) {
			h.plain.Store(true)
			strip(cmd)
			cmd.SetErr(nil)
			return next(ctx, cmd)
		}
		return err
	}
}

func (h *compatHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !h.plain.Load() {
			err := next(ctx, cmds)
			if err == nil || !anyRefusedShebang(cmds) {
				return err
			}
			h.plain.Store(true)
			for _, c := range cmds {
				c.SetErr(nil)
			}
		}
		for _, c := range cmds {
			strip(c)
		}
		return next(ctx, cmds)
	}
}

func anyRefusedShebang(cmds []redis.Cmder) bool {
	for _, c := range cmds {
		if c.Err() != nil && refusedShebang(c, c.Err()) {
			return true
		}
	}
	return false
}

// refusedShebang reports whether err is a server's refusal to compile the shebang of a script
// of New that cmd carries.
func refusedShebang(cmd redis.Cmder, err error) bool {
	if !strings.Contains(err.Error(), "Error compiling script") {
		return false
	}
	_, _, ok := scriptArg(cmd)
	return ok
}

// strip rewrites a command that carries a script of New into the same command with the
// shebang-less text: EVAL and EVALSHA (and their _RO forms) become EVAL of that text, SCRIPT
// LOAD loads it.
func strip(cmd redis.Cmder) {
	i, plain, ok := scriptArg(cmd)
	if !ok {
		return
	}
	args := cmd.Args()
	switch strings.ToLower(cmd.Name()) {
	case "evalsha", "evalsha_ro":
		args[0] = "eval"
	case "eval_ro":
		args[0] = "eval"
	}
	args[i] = plain
}

// scriptArg finds the argument of cmd that names or holds a script of New.
func scriptArg(cmd redis.Cmder) (int, string, bool) {
	args := cmd.Args()
	if len(args) < 2 {
		return 0, "", false
	}
	switch strings.ToLower(cmd.Name()) {
	case "eval", "evalsha", "eval_ro", "evalsha_ro":
		plain, ok := plainOf(args[1])
		return 1, plain, ok
	case "script":
		if len(args) >= 3 && strings.EqualFold(stringOf(args[1]), "load") {
			plain, ok := plainOf(args[2])
			return 2, plain, ok
		}
	}
	return 0, "", false
}

func stringOf(a any) string {
	s, _ := a.(string)
	return s
}

// IsOOM reports whether err is Redis's refusal of a command at maxmemory ("OOM command not
// allowed when used memory > 'maxmemory'"), also when a script got it.
func IsOOM(err error) bool { return err != nil && redis.HasErrorPrefix(err, "OOM") }

// TxError is the error of a transaction (MULTI ... EXEC) whose EXEC answered err: the OOM
// reply of one of its queued commands when Redis refused the transaction at maxmemory (Redis
// refuses every command queued in MULTI then, and EXEC answers EXECABORT), else err.
func TxError(err error, cmds ...redis.Cmder) error {
	if err == nil || !redis.HasErrorPrefix(err, "EXECABORT") {
		return err
	}
	for _, c := range cmds {
		if IsOOM(c.Err()) {
			return c.Err()
		}
	}
	return err
}
