package streamq

import (
	"context"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/script"
	"github.com/streamq-dev/streamq/internal/server"
)

// fullReadEvery is how long one reading of a refusing server's memory serves the refusals
// that follow it: a full Redis gets no INFO per refused publish.
const fullReadEvery = time.Second

// fullErrors turns a Redis refusal at maxmemory into a *RedisFullError, with the memory of
// the server that holds the partition, and notes the refusal in the topic's refusal record
// (read by admin, the CLI and the dashboard). Readings are kept per stream, and notes per
// topic, for fullReadEvery.
type fullErrors struct {
	mu    sync.Mutex
	reads map[string]fullRead  // partition stream -> last reading
	notes map[string]time.Time // topic -> last refusal noted
}

type fullRead struct {
	mem server.Memory
	at  time.Time
}

// of returns err as a *RedisFullError when it is Redis's OOM refusal, else err unchanged.
func (f *fullErrors) of(ctx context.Context, p *Publisher, topic string, part int, err error) error {
	if !script.IsOOM(err) {
		return err
	}
	if p.memory != nil {
		p.memory.Refused()
	}
	f.note(ctx, p, topic)
	mem := f.read(ctx, p, p.space.PartitionStream(topic, part))
	e := &RedisFullError{Topic: topic, Partition: part, Server: mem.Addr, Err: err}
	if mem.Known() {
		e.UsedMemory, e.MaxMemory = mem.Used, mem.Max
	}
	return e
}

func (f *fullErrors) read(ctx context.Context, p *Publisher, stream string) server.Memory {
	f.mu.Lock()
	r, ok := f.reads[stream]
	f.mu.Unlock()
	if ok && time.Since(r.at) < fullReadEvery {
		return r.mem
	}
	mem := server.MemoryOfKey(ctx, p.config.Client, stream)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reads == nil || len(f.reads) > 4096 {
		f.reads = map[string]fullRead{}
	}
	f.reads[stream] = fullRead{mem: mem, at: time.Now()}
	return mem
}

// note writes the topic's refusal record, at most once per fullReadEvery per topic. A note
// that fails is logged at debug level: the Publish reports the refusal anyway.
func (f *fullErrors) note(ctx context.Context, p *Publisher, topic string) {
	if !f.noteDue(topic) {
		return
	}
	if _, err := p.refusals.NoteRefused(ctx, topic); err != nil {
		p.logger.Debug("Could not note the refused publish for admin and the dashboard", watermill.LogFields{"topic": topic, "err": err.Error()})
	}
}

// noteDue reports whether topic's refusal is to be noted now, and if so takes the turn.
func (f *fullErrors) noteDue(topic string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if last, ok := f.notes[topic]; ok && time.Since(last) < fullReadEvery {
		return false
	}
	if f.notes == nil || len(f.notes) > 4096 {
		f.notes = map[string]time.Time{}
	}
	f.notes[topic] = time.Now()
	return true
}
