package admin

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
)

// Deleted is what DeleteTopic removed.
type Deleted struct {
	Topic string
	Keys  []string // every key deleted
}

// DeleteTopic removes a topic entirely: partition streams and DLQs, metadata and partition
// set, leases, membership, retry and delay sets, commit frontier, ack sets, offloaded payloads
// and the registry entry. It is destructive: consumers of the topic lose their position.
// It finds the keys with SCAN over every node (the keys of a topic all carry its hash tags),
// so it works on a Cluster and leaves nothing behind.
func (a *Admin) DeleteTopic(ctx context.Context, topic string) (Deleted, error) {
	if _, err := a.partitions(ctx, topic); err != nil {
		return Deleted{}, err
	}
	found, err := a.topicKeys(ctx, topic)
	if err != nil {
		return Deleted{}, err
	}
	for _, k := range found {
		if err := a.rdb.Del(ctx, k).Err(); err != nil {
			return Deleted{Topic: topic}, fmt.Errorf("delete %s: %w", k, err)
		}
	}
	if err := a.rdb.SRem(ctx, a.space.Registry(), topic).Err(); err != nil {
		return Deleted{Topic: topic, Keys: found}, fmt.Errorf("remove %q from the registry: %w", topic, err)
	}
	return Deleted{Topic: topic, Keys: found}, nil
}

// topicKeys scans every node for keys carrying the topic's hash tags ({T} or {T:p:N}).
func (a *Admin) topicKeys(ctx context.Context, topic string) ([]string, error) {
	pattern := "*{" + globEscape(topic) + "[:}]*"
	topicTag := "{" + topic + "}"
	partTag := regexp.MustCompile(`^\{` + regexp.QuoteMeta(topic) + `:p:\d+\}`)
	var (
		mu  sync.Mutex
		out []string
	)
	scan := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			k := iter.Val()
			if owned(k, topicTag, partTag, a.space) {
				mu.Lock()
				out = append(out, k)
				mu.Unlock()
			}
		}
		return iter.Err()
	}
	var err error
	switch c := a.rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, scan)
	case *redis.Client:
		err = scan(ctx, c)
	default:
		return nil, fmt.Errorf("%w: DeleteTopic needs a *redis.Client or *redis.ClusterClient, got %T", ErrInvalidArgument, a.rdb)
	}
	if err != nil {
		return nil, fmt.Errorf("scan keys of %q: %w", topic, err)
	}
	return out, nil
}

// topicKinds are the control keys scoped to a topic ({T}); every other control key of a
// topic, and every stream key, is scoped to a partition ({T:p:N}). Checking the tag by kind
// keeps topic "a:p:1" and partition 1 of topic "a" (both tagged {a:p:1}) apart.
var topicKinds = map[string]bool{"topic": true, "members": true, "dlqmembers": true}

// owned reports whether k is one of the topic's keys.
func owned(k, topicTag string, partTag *regexp.Regexp, space keys.Space) bool {
	open := strings.IndexByte(k, '{')
	if open < 0 {
		return false
	}
	tag := k[open:]
	switch {
	case strings.HasPrefix(k, space.Stream+":{"):
		return open == len(space.Stream)+1 && partTag.MatchString(tag)
	case strings.HasPrefix(k, space.Control+":"):
		kind := k[len(space.Control)+1 : open]
		if !strings.HasSuffix(kind, ":") || strings.Count(kind, ":") != 1 {
			return false
		}
		if topicKinds[strings.TrimSuffix(kind, ":")] {
			return strings.HasPrefix(tag, topicTag)
		}
		return partTag.MatchString(tag)
	}
	return false
}

func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
