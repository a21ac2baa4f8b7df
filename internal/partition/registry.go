// Package partition keeps the topic registry (registry set, topic meta hash, partitions set)
// and the partition count cache used by publishers and subscribers.
package partition

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/script"
)

//go:embed lua/register.lua
var registerSrc string

var registerScript = script.New(registerSrc)

var (
	//go:embed lua/declare.lua
	declareSrc    string
	declareScript = script.New(declareSrc)
	//go:embed lua/enlist.lua
	enlistSrc    string
	enlistScript = script.New(enlistSrc)
)

// Registry reads and writes topic metadata.
type Registry struct {
	rdb   redis.UniversalClient
	space keys.Space
}

// NewRegistry returns a Registry over rdb.
func NewRegistry(rdb redis.UniversalClient, space keys.Space) *Registry {
	return &Registry{rdb: rdb, space: space}
}

// Topic is what registering a topic found or created.
type Topic struct {
	Count   int               // the topic's partition count
	Created bool              // this call created the topic's metadata
	Groups  map[string]string // consumer groups declared on the topic: name -> start id
}

// Meta fields beside partitionCount: the length retention a Publisher records for the topic,
// so that the lease holders of its partitions apply it too.
const (
	FieldMaxLen     = "maxLen"
	FieldExactLen   = "exactMaxLen"
	FieldTrimPolicy = "trimPolicy"
)

// DefaultMaxLen is the length retention of a topic whose Publishers recorded none, and the
// Publishers' default.
const DefaultMaxLen int64 = 100_000

// Meta is a topic's metadata hash.
type Meta struct {
	Count  int  // partition count (1 when missing or unparseable)
	Exists bool // the hash has a partition count
	// MaxLen is the recorded length retention: 0 when none is recorded, -1 when it is off.
	MaxLen     int64
	ExactLen   bool
	TrimPolicy string
}

// Register creates the topic with count partitions if it does not exist yet, adds it to the
// registry and returns its partition count (the stored one when the topic already exists).
func (r *Registry) Register(ctx context.Context, topic string, count int) (int, error) {
	t, err := r.RegisterTopic(ctx, topic, count, nil)
	return t.Count, err
}

// RegisterTopic is Register that also stores settings (field, value pairs) in the meta hash
// and returns whether it created the topic and the groups declared on it.
func (r *Registry) RegisterTopic(ctx context.Context, topic string, count int, settings []string) (Topic, error) {
	prefix := r.space.Stream + ":{" + topic + ":p:"
	args := make([]any, 0, 2+len(settings))
	args = append(args, max(count, 1), prefix)
	for _, s := range settings {
		args = append(args, s)
	}
	res, err := registerScript.Run(ctx, r.rdb,
		[]string{r.space.Meta(topic), r.space.Partitions(topic), r.space.Groups(topic)}, args...).Slice()
	if err != nil {
		return Topic{}, fmt.Errorf("register topic %q: %w", topic, err)
	}
	t, err := parseTopic(res)
	if err != nil {
		return Topic{}, fmt.Errorf("register topic %q: %w", topic, err)
	}
	if err := enlistScript.Run(ctx, r.rdb, []string{r.space.Registry()}, topic).Err(); err != nil {
		return Topic{}, fmt.Errorf("add topic %q to registry: %w", topic, err)
	}
	return t, nil
}

func parseTopic(res []any) (Topic, error) {
	if len(res) != 3 {
		return Topic{}, fmt.Errorf("unexpected reply %v", res)
	}
	n, _ := res[0].(int64)
	created, _ := res[1].(int64)
	flat, _ := res[2].([]any)
	t := Topic{Count: int(n), Created: created == 1, Groups: make(map[string]string, len(flat)/2)}
	for i := 0; i+1 < len(flat); i += 2 {
		g, _ := flat[i].(string)
		start, _ := flat[i+1].(string)
		t.Groups[g] = start
	}
	return t, nil
}

// Count reads a topic's partition count. A missing or unparseable value reads as 1; exists
// reports whether the meta hash had the field at all.
func (r *Registry) Count(ctx context.Context, topic string) (n int, exists bool, err error) {
	m, err := r.Meta(ctx, topic)
	return m.Count, m.Exists, err
}

// Meta reads a topic's metadata hash in one round trip.
func (r *Registry) Meta(ctx context.Context, topic string) (Meta, error) {
	vals, err := r.rdb.HMGet(ctx, r.space.Meta(topic), "partitionCount", FieldMaxLen, FieldExactLen, FieldTrimPolicy).Result()
	if err != nil {
		return Meta{}, fmt.Errorf("read metadata of %q: %w", topic, err)
	}
	str := func(i int) string { s, _ := vals[i].(string); return s }
	m := Meta{Count: 1, Exists: vals[0] != nil, ExactLen: str(2) == "1", TrimPolicy: str(3)}
	if m.Exists {
		m.Count = ParseCount(str(0))
	}
	if v := str(1); v != "" {
		m.MaxLen, _ = strconv.ParseInt(v, 10, 64)
	}
	return m, nil
}

// DeclareGroup records group (and where it starts) on topic, so whoever creates the topic's
// partitions creates the group on them before anything is appended.
func (r *Registry) DeclareGroup(ctx context.Context, topic, group, startID string) error {
	if err := declareScript.Run(ctx, r.rdb, []string{r.space.Groups(topic)}, group, startID).Err(); err != nil {
		return fmt.Errorf("declare group %q on %q: %w", group, topic, err)
	}
	return nil
}

// ForgetGroup removes group's declaration from topic.
func (r *Registry) ForgetGroup(ctx context.Context, topic, group string) error {
	if err := r.rdb.HDel(ctx, r.space.Groups(topic), group).Err(); err != nil {
		return fmt.Errorf("forget group %q of %q: %w", group, topic, err)
	}
	return nil
}

// ParseCount parses a stored partition count; anything but a positive integer reads as 1.
func ParseCount(v string) int {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// Grow raises a topic's partition count to n (never lowers it) and registers the new
// partition streams. It returns the resulting count.
func (r *Registry) Grow(ctx context.Context, topic string, n int) (int, error) {
	cur, _, err := r.Count(ctx, topic)
	if err != nil {
		return 0, err
	}
	if n <= cur {
		return cur, nil
	}
	if err := r.rdb.HSet(ctx, r.space.Meta(topic), "partitionCount", n).Err(); err != nil {
		return 0, fmt.Errorf("grow topic %q: %w", topic, err)
	}
	return r.Register(ctx, topic, n)
}

// DeclaredGroups returns the names of the groups declared on topic (see DeclareGroup).
func (r *Registry) DeclaredGroups(ctx context.Context, topic string) ([]string, error) {
	names, err := r.rdb.HKeys(ctx, r.space.Groups(topic)).Result()
	if err != nil {
		return nil, fmt.Errorf("declared groups of %q: %w", topic, err)
	}
	return names, nil
}
