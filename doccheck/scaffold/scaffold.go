// Package scaffold declares the names the Go blocks of README.md and docs/*.md use without
// declaring them: a snippet continues a program the reader has (a client, a logger, a
// Router), and the docs check (package doccheck) type-checks each block together with this
// file, as one package. A block that declares one of these names at the top level replaces
// it; a block's statements shadow it.
//
// One name per declaration, none of them a package name of doccheck.Imports
// (TestScaffoldNamesAreNotPackageNames). Nothing here runs: the values are zero.
package scaffold

import (
	"context"
	"errors"
	"net/http"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
)

// The program's context, and an error a block assigns without declaring it (a continuation
// of the block before it: `err = pub.Publish(...)`).
var (
	ctx context.Context
	err error
)

// Redis clients, under the names the docs give them.
var (
	client      redis.UniversalClient
	redisClient redis.UniversalClient
	rdb         *redis.Client
)

// Watermill and streamq values of a running service.
var (
	logger watermill.LoggerAdapter
	pub    *streamq.Publisher
	sub    *streamq.Subscriber
	dlqSub *streamq.Subscriber // a Subscriber of a DLQTopic
	router *message.Router
	msg    *message.Message
)

// Operators' tools, HTTP and tracing.
var (
	a        *admin.Admin
	mux      *http.ServeMux
	hostname string
	exporter sdktrace.SpanExporter // the application's exporter, for a TracerProvider
)

// batch is where a handler that defers its ack puts a message (README, DeferAck).
var batch *batchWriter

// batchWriter writes payloads elsewhere in batches and calls done once a payload's batch is
// written, with the write's error.
type batchWriter struct{}

// Add queues payload for the next batch.
func (*batchWriter) Add(_ []byte, _ func(err error)) {}

// ErrInvalidOrder is an error a handler returns for a message no retry can fix.
var ErrInvalidOrder = errors.New("invalid order")

// checkpoint saves what the handlers did, while the Subscriber is paused.
func checkpoint() {}

// handle, handleOrder and handleAudit are Router handlers.
func handle(*message.Message) error { return nil }

func handleOrder(*message.Message) error { return nil }

func handleAudit(*message.Message) error { return nil }

// used keeps the linters from reporting the names above as unused: the snippets use them.
var _ = []any{ctx, err, client, redisClient, rdb, logger, pub, sub, dlqSub, router, msg,
	a, mux, hostname, exporter, batch, checkpoint, handle, handleOrder, handleAudit}
