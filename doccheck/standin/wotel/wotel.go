// Package opentelemetry stands in for github.com/voi-oss/watermill-opentelemetry/pkg/opentelemetry
// (imported as wotel in README.md) with the same signature of Trace: the module cannot be
// fetched through the module proxy this repository's CI uses, and the docs check needs only
// the types. Its spans are not the point: Trace returns the handler unchanged.
package opentelemetry

import "github.com/ThreeDotsLabs/watermill/message"

// Option configures Trace, as the real package's options do.
type Option func(*config)

type config struct{}

// Trace is the handler middleware of the real package: func Trace(options ...Option)
// message.HandlerMiddleware.
func Trace(_ ...Option) message.HandlerMiddleware {
	return func(h message.HandlerFunc) message.HandlerFunc { return h }
}
