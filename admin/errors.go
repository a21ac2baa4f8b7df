package admin

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

var (
	// ErrGroupNotFound reports a consumer group that exists on no partition of a known topic.
	ErrGroupNotFound = errors.New("consumer group not found")
	// ErrTopicExists reports a CreateTopic of a topic that is already registered.
	ErrTopicExists = errors.New("topic already exists")
	// ErrLiveMembers reports a DeleteGroup or DeleteTopic refused because members of the
	// group or topic are live; the error is a *LiveMembersError that names them.
	ErrLiveMembers = errors.New("live members")
)

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
