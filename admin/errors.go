package admin

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

var (
	// ErrGroupNotFound reports a consumer group that exists on no partition of a known topic.
	ErrGroupNotFound = errors.New("consumer group not found")
	// ErrTopicExists reports a CreateTopic of a topic that is already registered.
	ErrTopicExists = errors.New("topic already exists")
	// ErrLiveMembers reports a DeleteGroup or DeleteTopic refused because members of the
	// group or topic are live; the error is a *LiveMembersError that names them.
	ErrLiveMembers = errors.New("live members")
	// ErrAlreadyReplayed reports a ReplayDeadLetter of a letter replayed before, without
	// ReplayOptions.Again: nothing was replayed. The error is an *AlreadyReplayedError that
	// says when and as which entry.
	ErrAlreadyReplayed = errors.New("dead letter already replayed")
)

// AlreadyReplayedError is the error of a ReplayDeadLetter of a letter replayed before (it is
// kept in the DLQ with a replay mark): nothing was replayed. errors.Is(err,
// ErrAlreadyReplayed) holds. ReplayOptions.Again replays it again.
type AlreadyReplayedError struct {
	Topic     string
	Partition int
	ID        string // the dead letter's id
	// ReplayedAt and ReplayedAs are the earlier replay: when, and the stream id of the entry
	// it appended, as in DeadLetter.
	ReplayedAt time.Time
	ReplayedAs string
}

func (e *AlreadyReplayedError) Error() string {
	return fmt.Sprintf("%s: %s of %q partition %d at %s as %s", ErrAlreadyReplayed, e.ID, e.Topic, e.Partition,
		timeText(e.ReplayedAt), e.ReplayedAs)
}

// Unwrap returns ErrAlreadyReplayed.
func (e *AlreadyReplayedError) Unwrap() error { return ErrAlreadyReplayed }

// LiveMembersError is the error of a DeleteGroup or DeleteTopic refused because members are
// live (their heartbeat has not expired); nothing was deleted. errors.Is(err,
// ErrLiveMembers) holds. Stop the members, or delete with DeleteOptions.Force.
type LiveMembersError struct {
	Topic string
	// Group is the group DeleteGroup was asked to delete; "" for DeleteTopic.
	Group string
	// Members names the live members once each, sorted: Group's for DeleteGroup, those of
	// every group for DeleteTopic.
	Members []string
	// Groups lists every group with live members, sorted by name (for DeleteGroup, Group).
	Groups []LiveGroup
}

func newLiveMembersError(topic, group string, groups []LiveGroup) *LiveMembersError {
	seen := map[string]bool{}
	var names []string
	for _, g := range groups {
		for _, m := range append(append([]string(nil), g.Members...), g.DLQMembers...) {
			if !seen[m] {
				seen[m] = true
				names = append(names, m)
			}
		}
	}
	sort.Strings(names)
	return &LiveMembersError{Topic: topic, Group: group, Members: names, Groups: groups}
}

func (e *LiveMembersError) Error() string {
	if e.Group != "" {
		return fmt.Sprintf("%s: group %q of topic %q: %s", ErrLiveMembers, e.Group, e.Topic, strings.Join(e.Members, ", "))
	}
	return fmt.Sprintf("%s: topic %q: %s", ErrLiveMembers, e.Topic, describeLive(e.Groups))
}

// Unwrap returns ErrLiveMembers.
func (e *LiveMembersError) Unwrap() error { return ErrLiveMembers }

func describeLive(groups []LiveGroup) string {
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = g.String()
	}
	return strings.Join(parts, "; ")
}
