package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/streamq-dev/streamq/internal/partition"
)

// PauseState is whether an operator paused a consumer group (PauseGroup), and since when.
type PauseState struct {
	Paused bool
	Since  time.Time // zero when not paused
}

// PauseGroup pauses group on topic for every member, in every process: within the members'
// RebalanceInterval each one stops reading and handing messages to handlers, keeps its
// leases and its place in the group (no rebalance), and lets the messages in flight finish.
// Messages published meanwhile wait in their partitions. The pause is a key in the topic's
// slot, so members that restart or join meanwhile stay paused, until ResumeGroup. Pausing a
// paused group keeps its start. topic may be a DLQ topic ("orders:dlq") to pause a group
// consuming dead letters. ErrTopicNotFound, or ErrGroupNotFound for a group that is neither
// declared on the topic nor created on one of its partitions or DLQs.
func (a *Admin) PauseGroup(ctx context.Context, topic, group string) (PauseState, error) {
	key, err := a.pauseKey(ctx, topic, group)
	if err != nil {
		return PauseState{}, err
	}
	p, err := a.reg.PauseGroup(ctx, key, time.Now())
	return pauseState(p), err
}

// ResumeGroup ends a PauseGroup: every member goes on where it stopped, in order, within
// its RebalanceInterval. It reports whether the group was paused.
func (a *Admin) ResumeGroup(ctx context.Context, topic, group string) (bool, error) {
	key, err := a.pauseKey(ctx, topic, group)
	if err != nil {
		return false, err
	}
	return a.reg.ResumeGroup(ctx, key)
}

// GroupPause reads whether an operator paused group on topic (a DLQ topic too), and since
// when.
func (a *Admin) GroupPause(ctx context.Context, topic, group string) (PauseState, error) {
	key, err := a.pauseKey(ctx, topic, group)
	if err != nil {
		return PauseState{}, err
	}
	p, err := a.reg.Paused(ctx, key)
	return pauseState(p), err
}

// pauseKey checks topic and group and returns the group's pause key.
func (a *Admin) pauseKey(ctx context.Context, topic, group string) (string, error) {
	if err := checkGroup(group); err != nil {
		return "", err
	}
	base, dlq := strings.CutSuffix(topic, dlqSuffix)
	n, err := a.partitions(ctx, base)
	if err != nil {
		return "", err
	}
	known, err := a.knownGroups(ctx, base, n)
	if err != nil {
		return "", err
	}
	if !slices.Contains(known, group) {
		return "", fmt.Errorf("%w: %q on topic %q", ErrGroupNotFound, group, base)
	}
	return a.reg.PauseKey(base, group, dlq), nil
}

func pauseState(p partition.Pause) PauseState { return PauseState{Paused: p.Paused, Since: p.Since} }

// GroupPauses reads whether an operator paused each of groups on topic, in one round trip:
// the paused ones only, by group (the dashboard's health reads every group of a topic at once).
func (a *Admin) GroupPauses(ctx context.Context, topic string, groups []string) (map[string]PauseState, error) {
	keys := make([]string, len(groups))
	for i, g := range groups {
		keys[i] = a.reg.PauseKey(topic, g, false)
	}
	ps, err := a.reg.PausedAll(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := map[string]PauseState{}
	for i, p := range ps {
		if p.Paused {
			out[groups[i]] = pauseState(p)
		}
	}
	return out, nil
}
