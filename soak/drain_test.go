//go:build soak

package soak

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/keys"
)

// Draining: after the publishers stop, the consumers run until, in every group, nothing is
// pending, the group has been delivered the last entry of every partition and no retry is
// parked, several polls in a row.
const (
	drainPoll    = 500 * time.Millisecond
	drainStable  = 3
	drainTimeout = 2 * time.Minute
)

// drained is the outcome of waitDrained: what is left ("" once everything is consumed) and
// the partitions for which admin's GroupStats reported a lag although the group was caught up.
type drained struct {
	left      string
	lagClaims []string
}

// waitDrained waits until everything is consumed, or drainTimeout (a stuck partition).
func waitDrained(ctx context.Context, client redis.UniversalClient) drained {
	a, err := admin.New(client, admin.Options{})
	if err != nil {
		return drained{left: err.Error()}
	}
	tick := time.NewTicker(drainPoll)
	defer tick.Stop()
	deadline := time.NewTimer(drainTimeout)
	defer deadline.Stop()
	stable, last := 0, drained{left: "not polled yet"}
	for {
		select {
		case <-tick.C:
		case <-deadline.C:
			return last
		case <-ctx.Done():
			last.left += " (" + ctx.Err().Error() + ")"
			return last
		}
		if last = backlog(ctx, a, client); last.left == "" {
			stable++
		} else {
			stable = 0
		}
		if stable >= drainStable {
			return last
		}
	}
}

// backlog describes what is still to be consumed.
func backlog(ctx context.Context, a *admin.Admin, client redis.UniversalClient) drained {
	var d drained
	var left []string
	infos, err := streamInfos(ctx, client)
	if err != nil {
		return drained{left: err.Error()}
	}
	for _, g := range groups {
		st, err := a.GroupStats(ctx, topic, g)
		if err != nil {
			return drained{left: fmt.Sprintf("group stats of %s: %v", g, err)}
		}
		for _, p := range st.Partitions {
			info := infos[p.Partition]
			switch {
			case p.Pending > 0 || p.LastDeliveredID != info.LastGeneratedID:
				left = append(left, fmt.Sprintf("%s/p%d pending %d delivered up to %s of %s, owner %q",
					g, p.Partition, p.Pending, p.LastDeliveredID, info.LastGeneratedID, p.LeaseOwner))
			case p.Lag != 0:
				d.lagClaims = append(d.lagClaims, fmt.Sprintf("%s/p%d lag %d (entries-added %d, entries-read %d, max-deleted-entry-id %s)",
					g, p.Partition, p.Lag, info.EntriesAdded, p.EntriesRead, info.MaxDeletedEntryID))
			}
		}
		retries, err := waitingRetries(ctx, client, g)
		if err != nil {
			return drained{left: err.Error()}
		}
		left = append(left, retries...)
	}
	d.left = strings.Join(left, "; ")
	return d
}

// streamInfos reads XINFO STREAM of every partition (the last id generated, the count of
// entries added).
func streamInfos(ctx context.Context, client redis.UniversalClient) ([]*redis.XInfoStream, error) {
	space := keys.New("", "")
	cmds := make([]*redis.XInfoStreamCmd, partitions)
	_, err := client.Pipelined(ctx, func(pl redis.Pipeliner) error {
		for p := range cmds {
			cmds[p] = pl.XInfoStream(ctx, space.PartitionStream(topic, p))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("stream info: %w", err)
	}
	out := make([]*redis.XInfoStream, partitions)
	for p, c := range cmds {
		out[p] = c.Val()
	}
	return out, nil
}

// waitingRetries lists the partitions of group with retries still parked.
func waitingRetries(ctx context.Context, client redis.UniversalClient, group string) ([]string, error) {
	space := keys.New("", "")
	cmds := make([]*redis.IntCmd, partitions)
	_, err := client.Pipelined(ctx, func(pl redis.Pipeliner) error {
		for p := range cmds {
			cmds[p] = pl.ZCard(ctx, space.Retry(topic, p, group))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("retry sets of %s: %w", group, err)
	}
	var out []string
	for p, c := range cmds {
		if n := c.Val(); n > 0 {
			out = append(out, fmt.Sprintf("%s/p%d %d retries parked", group, p, n))
		}
	}
	return out, nil
}
