package prometheus

import (
	"errors"
	"fmt"
	"math"

	prom "github.com/prometheus/client_golang/prometheus"
)

// DefaultNamespace prefixes every metric name unless Options.Namespace is set.
const DefaultNamespace = "streamq"

// DefaultBuckets are the histogram buckets in seconds, from 1 ms to 60 s: handler times,
// backpressure waits and DLQ replays range from sub-millisecond to a slow handler's
// seconds.
var DefaultBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// ErrInvalidBuckets is returned by New when Options.Buckets are not strictly increasing.
var ErrInvalidBuckets = errors.New("buckets must be strictly increasing numbers")

// Options configure New.
type Options struct {
	// Namespace prefixes every metric name ("<Namespace>_acked_total"). Optional; default
	// DefaultNamespace.
	Namespace string
	// Registerer receives every metric. Optional; default prom.DefaultRegisterer.
	Registerer prom.Registerer
	// Buckets are the upper bounds, in seconds, of the histograms' buckets. Optional;
	// default DefaultBuckets. Must be strictly increasing.
	Buckets []float64
}

func (o *Options) setDefaults() {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Registerer == nil {
		o.Registerer = prom.DefaultRegisterer
	}
	if len(o.Buckets) == 0 {
		o.Buckets = DefaultBuckets
	}
}

// Validate reports whether the options, defaults applied, can build a Collector.
func (o Options) Validate() error {
	for i, b := range o.Buckets {
		if math.IsNaN(b) || (i > 0 && b <= o.Buckets[i-1]) {
			return fmt.Errorf("%w: %v", ErrInvalidBuckets, o.Buckets)
		}
	}
	return nil
}
