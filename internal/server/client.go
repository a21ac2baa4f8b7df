package server

import (
	"errors"
	"reflect"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/redis/go-redis/v9"
)

// IsNil reports whether rdb is nil or holds a nil pointer (var c *redis.Client; rdb = c):
// such a client passes a nil check and panics at its first command.
func IsNil(rdb redis.UniversalClient) bool {
	if rdb == nil {
		return true
	}
	v := reflect.ValueOf(rdb)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// ReadTimeout is the read timeout of a go-redis client, and false for other implementations
// of redis.UniversalClient. go-redis reads a whole pipeline's replies within it: a command
// that blocks inside a pipeline (WAIT, a BLOCK read) must return well before it.
func ReadTimeout(rdb redis.UniversalClient) (time.Duration, bool) {
	switch c := rdb.(type) {
	case *redis.Client:
		return c.Options().ReadTimeout, true
	case *redis.ClusterClient:
		return c.Options().ReadTimeout, true
	case *redis.Ring:
		return c.Options().ReadTimeout, true
	}
	return 0, false
}

// IsClosed reports whether err comes from a client that was closed.
func IsClosed(err error) bool { return errors.Is(err, redis.ErrClosed) }

// Sharded reports whether rdb spreads keys over several servers (a Cluster or a Ring): a
// keyless command in its pipeline goes to any one of them.
func Sharded(rdb redis.UniversalClient) bool {
	switch rdb.(type) {
	case *redis.ClusterClient, *redis.Ring:
		return true
	}
	return false
}

// perClient holds values kept per go-redis client, keyed by a weak pointer to it: a client
// that is garbage collected takes its entry with it.
var perClient sync.Map

// PerClient returns the value kept for rdb under name, made by mk the first time, shared by
// every user of the same go-redis client. A client of another type gets a new value each call.
func PerClient[V any](rdb redis.UniversalClient, name string, mk func() *V) *V {
	switch c := rdb.(type) {
	case *redis.Client:
		return shared(c, name, mk)
	case *redis.ClusterClient:
		return shared(c, name, mk)
	case *redis.Ring:
		return shared(c, name, mk)
	}
	return mk()
}

type clientKey[T any] struct {
	client weak.Pointer[T]
	name   string
}

func shared[T, V any](c *T, name string, mk func() *V) *V {
	key := clientKey[T]{weak.Make(c), name}
	if v, ok := perClient.Load(key); ok {
		return v.(*V)
	}
	v, loaded := perClient.LoadOrStore(key, mk())
	if !loaded {
		runtime.AddCleanup(c, func(key clientKey[T]) { perClient.Delete(key) }, key)
	}
	return v.(*V)
}
