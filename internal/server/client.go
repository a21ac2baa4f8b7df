package server

import (
	"reflect"
	"time"

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
