package admin

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/partition"
)

// Deleted is what DeleteTopic removed.
type Deleted struct {
	Topic string
	Keys  []string // every key deleted
	// LiveGroups are the groups whose live members a forced delete went past, sorted by
	// group; nil when none.
	LiveGroups []LiveGroup
	// Tombstone is the key of the tombstone written for them (keys.Space.TopicTombstone,
	// expiring after keys.TombstoneTTL); "" when LiveGroups is nil.
	Tombstone string
}

// DeleteTopic removes a topic entirely: partition streams and DLQs, metadata and partition
// set, leases, membership, retry and delay sets, commit frontier, ack sets, offloaded payloads,
// tombstones of earlier forced deletes, and the registry entry. It is destructive: consumers
// of the topic lose their position. It finds the keys with SCAN over every node (the keys of
// a topic all carry its hash tags), so it works on a Cluster and leaves nothing behind.
//
// While any group of the topic has live members, consuming the topic or its DLQ (see
// LiveMembers; membership keys the scan finds count too), it refuses with a
// *LiveMembersError (ErrLiveMembers) listing every such group and deletes nothing. With
// DeleteOptions.Force it deletes all the same, writing first the topic's tombstone
// (keys.Space.TopicTombstone, keys.TombstoneTTL): the running members stop instead of
// recreating the topic; CreateTopic clears it. The members are checked once, before anything
// is deleted; one that joins after the check is not seen.
func (a *Admin) DeleteTopic(ctx context.Context, topic string, opts ...DeleteOptions) (Deleted, error) {
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return Deleted{}, err
	}
	found, err := a.topicKeys(ctx, topic)
	if err != nil {
		return Deleted{}, err
	}
	d := Deleted{Topic: topic}
	if d.LiveGroups, err = a.topicLive(ctx, topic, n, found, force(opts)); err != nil {
		return d, err
	}
	if d.LiveGroups != nil {
		// Before anything goes, so that no running member sees the topic gone without it.
		if d.Tombstone, err = a.reg.MarkTopicDeleted(ctx, topic); err != nil {
			return d, err
		}
		found = slices.DeleteFunc(found, func(k string) bool { return k == d.Tombstone })
	}
	return d, a.removeTopic(ctx, &d, found)
}

// topicLive returns the groups of topic with live members (known groups and the membership
// keys among scanned), or a *LiveMembersError when there are some and the delete is not
// forced.
func (a *Admin) topicLive(ctx context.Context, topic string, n int, scanned []string, forced bool) ([]LiveGroup, error) {
	groups, err := a.knownGroups(ctx, topic, n)
	if err != nil {
		return nil, err
	}
	live, err := a.live(ctx, append(a.memberships(topic, groups), a.scannedMemberships(topic, scanned)...))
	if err != nil || len(live) == 0 {
		return nil, err
	}
	if !forced {
		return nil, newLiveMembersError(topic, "", live)
	}
	return live, nil
}

// removeTopic deletes the keys found and the registry entry, recording them in d. The
// leases go first: once they are gone, no running member's fenced step (an ack flush, a
// retry, a dead letter) writes anything, so a second scan finds what one wrote between the
// first scan and the leases' removal (a commit frontier, a DLQ entry).
func (a *Admin) removeTopic(ctx context.Context, d *Deleted, found []string) error {
	slices.SortStableFunc(found, func(x, y string) int { return boolOrder(a.space.IsLease(y), a.space.IsLease(x)) })
	n, err := partition.DeleteEach(ctx, a.rdb, found)
	d.Keys = found[:n]
	if err != nil {
		return err
	}
	late, err := a.topicKeys(ctx, d.Topic)
	if err != nil {
		return err
	}
	late = slices.DeleteFunc(late, func(k string) bool { return k == d.Tombstone })
	n, err = partition.DeleteEach(ctx, a.rdb, late)
	for _, k := range late[:n] {
		if !slices.Contains(d.Keys, k) {
			d.Keys = append(d.Keys, k)
		}
	}
	if err != nil {
		return err
	}
	return a.reg.Unregister(ctx, d.Topic)
}

// boolOrder orders false before true.
func boolOrder(x, y bool) int {
	switch {
	case x == y:
		return 0
	case x:
		return 1
	default:
		return -1
	}
}

// topicKeys scans every node for keys carrying the topic's hash tags ({T} or {T:p:N}).
func (a *Admin) topicKeys(ctx context.Context, topic string) ([]string, error) {
	pattern := "*{" + globEscape(topic) + "[:}]*"
	topicTag := "{" + topic + "}"
	partTag := regexp.MustCompile(`^\{` + regexp.QuoteMeta(topic) + `:p:\d+\}`)
	out, err := partition.ScanKeys(ctx, a.rdb, pattern, func(k string) bool { return owned(k, topicTag, partTag, a.space) })
	if errors.Is(err, partition.ErrScanUnsupported) {
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
// The tombstones of forced deletes ("deleted", {T} and {T}:G) are topic-scoped too, so
// deleting a topic created again removes those left by an earlier forced delete.
var topicKinds = map[string]bool{"topic": true, "history": true, "members": true, "dlqmembers": true, "deleted": true, "paused": true, "dlqpaused": true}

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
