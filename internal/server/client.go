package server

import (
	"reflect"

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
