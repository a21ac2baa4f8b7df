package streamq

import (
	"errors"
)

const (
	defaultMaxPipelineSize = 1000
	defaultFlushers        = 2
	defaultQueueSize       = 4096
)

// PipelineConfig is how concurrent Publish calls share pipelines: the writes of the calls
// waiting when a pipeline is sent go in it (one call is never split).
type PipelineConfig struct {
	// MaxSize caps the writes of one pipeline. Default 1000.
	MaxSize int
	// Flushers is how many pipelines may be in flight at once. Default 2.
	Flushers int
	// QueueSize bounds the Publish calls waiting for a pipeline; callers beyond it wait.
	// Default 4096.
	QueueSize int
}

func (p *PipelineConfig) setDefaults() {
	setDefault(&p.MaxSize, defaultMaxPipelineSize)
	setDefault(&p.Flushers, defaultFlushers)
	setDefault(&p.QueueSize, defaultQueueSize)
}

func (p PipelineConfig) validate() error {
	return errors.Join(positive("Pipeline.MaxSize", p.MaxSize), positive("Pipeline.Flushers", p.Flushers),
		positive("Pipeline.QueueSize", p.QueueSize))
}
