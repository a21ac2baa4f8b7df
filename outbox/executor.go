package outbox

import (
	"context"
	"database/sql"
	"reflect"

	wsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
)

// Executor runs statements: *sql.Tx (the point of an outbox: the business write and its
// events in one transaction), *sql.Conn or *sql.DB.
type Executor interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// stdExecutor is an Executor as watermill-sql's ContextExecutor, whose methods return its
// own Result and Rows interfaces (the role of watermill-sql's TxFromStdSQL, for any
// Executor).
type stdExecutor struct{ Executor }

func (e stdExecutor) ExecContext(ctx context.Context, query string, args ...any) (wsql.Result, error) {
	return e.Executor.ExecContext(ctx, query, args...)
}

func (e stdExecutor) QueryContext(ctx context.Context, query string, args ...any) (wsql.Rows, error) {
	return e.Executor.QueryContext(ctx, query, args...)
}

// isNil reports a nil interface or an interface holding a nil pointer (var tx *sql.Tx).
func isNil(v any) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return r.IsNil()
	}
	return false
}
