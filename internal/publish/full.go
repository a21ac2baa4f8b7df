package publish

import (
	"context"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/health"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/script"
	"github.com/streamq-dev/streamq/internal/server"
)

// fullReadEvery is how long one reading of a refusing server's memory serves the refusals
// that follow it: a full Redis gets no INFO per refused publish.
const fullReadEvery = time.Second

// fullErrors turns a Redis refusal at maxmemory into the error of Errors.Full, with the memory of
// the server that holds the partition, and notes the refusal in the topic's refusal record
// (read by admin, the CLI and the dashboard). Readings are kept per stream, and notes per
// topic, for fullReadEvery.
type fullErrors struct {
	rdb      redis.UniversalClient
	space    keys.Space
	memory   *health.Watch       // told of each refusal; nil: not watched
	refusals *partition.Registry // writes a topic's refusal record
	build    func(FullInfo, error) error
	logger   watermill.LoggerAdapter
	clock    clock.Clock

	mu    sync.Mutex
	reads map[string]fullRead  // partition stream -> last reading
	notes map[string]time.Time // topic -> last refusal noted
}

type fullRead struct {
	mem server.Memory
	at  time.Time
}

// of returns err as the error of Errors.Full when it is Redis's OOM refusal, else err unchanged.
func (f *fullErrors) of(ctx context.Context, topic string, part int, err error) error {
	if !script.IsOOM(err) {
		return err
	}
	if f.memory != nil {
		f.memory.Refused()
	}
	f.note(ctx, topic)
	mem := f.read(ctx, f.space.PartitionStream(topic, part))
	e := FullInfo{Topic: topic, Partition: part, Server: mem.Addr}
	if mem.Known() {
		e.UsedMemory, e.MaxMemory = mem.Used, mem.Max
	}
	return f.build(e, err)
}

func (f *fullErrors) read(ctx context.Context, stream string) server.Memory {
	f.mu.Lock()
	r, ok := f.reads[stream]
	f.mu.Unlock()
	if ok && clock.Since(f.clock, r.at) < fullReadEvery {
		return r.mem
	}
	mem := server.MemoryOfKey(ctx, f.rdb, stream)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reads == nil || len(f.reads) > 4096 {
		f.reads = map[string]fullRead{}
	}
	f.reads[stream] = fullRead{mem: mem, at: f.clock.Now()}
	return mem
}

// note writes the topic's refusal record, at most once per fullReadEvery per topic. A note
// that fails is logged at debug level: the Publish reports the refusal anyway.
func (f *fullErrors) note(ctx context.Context, topic string) {
	if !f.noteDue(topic) {
		return
	}
	if _, err := f.refusals.NoteRefused(ctx, topic); err != nil {
		f.logger.Debug("Could not note the refused publish for admin and the dashboard", watermill.LogFields{"topic": topic, "err": err.Error()})
	}
}

// noteDue reports whether topic's refusal is to be noted now, and if so takes the turn.
func (f *fullErrors) noteDue(topic string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if last, ok := f.notes[topic]; ok && clock.Since(f.clock, last) < fullReadEvery {
		return false
	}
	if f.notes == nil || len(f.notes) > 4096 {
		f.notes = map[string]time.Time{}
	}
	f.notes[topic] = f.clock.Now()
	return true
}
