// Package script is the one NOSCRIPT policy of streamq's Lua scripts.
//
//   - A script run on its own goes through redis.Script.Run: EVALSHA, then EVAL with the
//     text when the server answers NOSCRIPT (a restarted or failed-over server starts with
//     an empty script cache).
//   - A script queued in a pipeline is sent by SHA after a Load; a NOSCRIPT reply in the
//     pipeline (IsNoScript) makes its caller load it again and send the refused commands
//     once more, in their order.
//   - A script whose place in a pipeline must hold against the plain commands around it
//     (the publisher's offloaded append) is sent as EVAL with its text, so it can never be
//     refused and sent again out of order.
package script

import "github.com/redis/go-redis/v9"

// IsNoScript reports whether err is the server's NOSCRIPT reply: the script is not cached.
func IsNoScript(err error) bool { return err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") }
