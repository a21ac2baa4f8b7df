package streamqotel

import (
	"strings"

	"github.com/ThreeDotsLabs/watermill/message"
	"go.opentelemetry.io/otel/propagation"
)

// Metadata keys of the link a retry and a dead letter carry: the W3C trace context of the
// span that wrote them ("retry T", "dead_letter T"). The next delivery links to it.
const (
	LinkTraceParentMetadata = linkPrefix + "traceparent"
	LinkTraceStateMetadata  = linkPrefix + "tracestate"
)

const linkPrefix = "x-streamq-link-"

// linkFormat encodes the link: always the W3C format, whatever Config.Propagator is.
var linkFormat = propagation.TraceContext{}

// linkCarrier is the message's metadata with the link's keys: traceparent is stored as
// x-streamq-link-traceparent, beside the message's own traceparent.
type linkCarrier message.Metadata

var _ propagation.TextMapCarrier = linkCarrier(nil)

func (c linkCarrier) Get(key string) string { return c[linkPrefix+key] }

func (c linkCarrier) Set(key, value string) { c[linkPrefix+key] = value }

func (c linkCarrier) Keys() []string {
	var out []string
	for k := range c {
		if rest, ok := strings.CutPrefix(k, linkPrefix); ok {
			out = append(out, rest)
		}
	}
	return out
}

// clearFields removes the keys the propagator writes, so a stale tracestate (or link) of an
// earlier context is not left beside the new one.
func clearFields(md message.Metadata, prefix string, p propagation.TextMapPropagator) {
	for _, f := range p.Fields() {
		delete(md, prefix+f)
	}
}
