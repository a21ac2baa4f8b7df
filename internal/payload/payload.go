// Package payload offloads large payloads to their own key in the partition's hash slot. The
// stream entry keeps a reference; readers load it back transparently. A payload is deleted
// when every registered group has acked its entry (see the ack script), or by the housekeeper
// once its entry is gone (trimmed or deleted), or by its TTL when retention is set.
package payload

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/streamq-dev/streamq/internal/script"
)

// Stream fields of an entry whose payload is offloaded (the seed's header names).
const (
	FieldRef          = "x-payload-hash-ref"
	FieldStorageType  = "x-payload-storage-type"
	FieldOriginalSize = "x-payload-original-size"
	StorageString     = "string"
)

// DefaultThreshold is the payload size above which payloads are offloaded (the seed's 64 KiB).
const DefaultThreshold = 64 * 1024

// ErrMissing reports an entry whose offloaded payload is gone.
var ErrMissing = errors.New("offloaded payload missing")

var (
	//go:embed lua/offload.lua
	offloadSrc    string
	offloadScript = script.New(offloadSrc)
)

// Stored is a payload kept in its own key: the key (in the partition's slot), the partition's
// payload index, the reference its entry carries, the bytes and their TTL (0: none).
type Stored struct {
	Key, Index, Ref string
	Payload         []byte
	TTL             time.Duration
}

// Offload describes one offloaded append.
type Offload struct {
	Stored
	Stream string
	Fields []any // entry fields, including the reference fields
}

// Offloads reports whether a payload of size bytes goes to its own key under threshold
// (<= 0: never).
func Offloads(threshold, size int) bool { return threshold > 0 && size > threshold }

// RefFields returns the fields that point an entry at its offloaded payload.
func RefFields(ref string, size int) []any {
	return []any{FieldRef, ref, FieldStorageType, StorageString, FieldOriginalSize, strconv.Itoa(size)}
}

// Cmd queues the offloaded append on pipe. It sends the script's text (EVAL), not its SHA:
// an EVALSHA refused with NOSCRIPT (a restarted or failed-over server has an empty script
// cache) would have to be sent again after the plain appends of the same pipeline succeeded,
// out of their order. The text is under 1 KiB next to a payload over the threshold.
func Cmd(ctx context.Context, pipe redis.Pipeliner, o Offload) *redis.Cmd {
	args := append([]any{o.Payload, o.TTL.Milliseconds(), o.Ref}, o.Fields...)
	return offloadScript.Eval(ctx, pipe, []string{o.Key, o.Stream, o.Index}, args...)
}

// Ref returns the payload reference of entry values, or "".
func Ref(values map[string]any) string {
	ref, _ := values[FieldRef].(string)
	return ref
}

// Get loads an offloaded payload; ErrMissing when the key is gone.
func Get(ctx context.Context, rdb redis.Cmdable, key string) (string, error) {
	v, err := rdb.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("%w: %s", ErrMissing, key)
	}
	if err != nil {
		return "", fmt.Errorf("load payload %s: %w", key, err)
	}
	return v, nil
}

// IndexMember splits a payload index member "id|ref".
func IndexMember(member string) (id, ref string, ok bool) {
	return strings.Cut(member, "|")
}

// Inline is an entry's fields with its offloaded payload, loaded as data, put back into the
// payload field: a copy, the entry read is left as it was.
func Inline(values map[string]any, field, data string) map[string]any {
	out := make(map[string]any, len(values))
	for k, v := range values {
		out[k] = v
	}
	out[field] = data
	return out
}
