package dashboard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/streamq-dev/streamq/admin"
)

// trendOf is a group's recent samples: lags and entries-read, one sample every 10 s.
func trendOf(lags, reads []int64) recent {
	var rc recent
	for i := range lags {
		rc = append(rc, admin.HistorySample{Time: time.Unix(int64(10*i), 0),
			Groups: map[string]admin.HistoryGroup{"g": {Lag: lags[i], EntriesRead: reads[i]}}})
	}
	return rc
}

// TestGroupHealth: each problem of the Topics page from the facts that make it.
func TestGroupHealth(t *testing.T) {
	steady := trendOf([]int64{5, 5, 5}, []int64{100, 200, 300})
	tests := []struct {
		name  string
		facts groupFacts
		rc    recent
		state string
		codes []string
	}{
		{"healthy", groupFacts{Members: 1, Lag: 5}, steady, sevOK, nil},
		{"no member with a backlog", groupFacts{Lag: 100}, steady, sevCritical, []string{probNoMember}},
		{"no member, nothing waiting", groupFacts{}, steady, sevWarning, []string{probNoMember}},
		{"nothing consumed while lag > 0", groupFacts{Members: 1, Lag: 7}, trendOf([]int64{7, 7, 7}, []int64{50, 50, 50}), sevCritical, []string{probNotConsuming}},
		{"lag growing", groupFacts{Members: 1, Lag: 400}, trendOf([]int64{100, 200, 400}, []int64{10, 20, 30}), sevWarning, []string{probLagGrowing}},
		{"lag grew, then fell", groupFacts{Members: 1, Lag: 150}, trendOf([]int64{100, 300, 150}, []int64{10, 20, 30}), sevOK, nil},
		{"small rise is noise", groupFacts{Members: 1, Lag: 8}, trendOf([]int64{2, 5, 8}, []int64{10, 20, 30}), sevOK, nil},
		{"too few samples for a trend", groupFacts{Members: 1, Lag: 400}, trendOf([]int64{0, 400}, []int64{0, 0}), sevOK, nil},
		{"dead letters arriving", groupFacts{Members: 1, Lag: 5, DeadLetters: 3}, steady, sevWarning, []string{probDeadLetters}},
		{"expired", groupFacts{Members: 1, Lag: 5, Expired: true}, steady, sevWarning, []string{probExpired}},
		{"stalled, no member, growing, dead letters", groupFacts{Lag: 400, DeadLetters: 1}, trendOf([]int64{100, 200, 400}, []int64{9, 9, 9}),
			sevCritical, []string{probNoMember, probLagGrowing, probDeadLetters}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.facts.Name = "g"
			v := groupHealth(tt.facts.with(tt.rc))
			assert.Equal(t, tt.state, v.State)
			var codes []string
			for _, p := range v.Problems {
				codes = append(codes, p.Code)
			}
			assert.Equal(t, tt.codes, codes)
		})
	}
}

// TestTopicHealth: the topic takes its groups' problems, named after them, and dead letters
// no group accounts for.
func TestTopicHealth(t *testing.T) {
	bad := okHealth()
	bad.add(probNoMember, sevCritical, "no live member")
	v := topicHealth([]string{"a", "b"}, []healthView{okHealth(), bad}, 2)
	assert.Equal(t, sevCritical, v.State)
	assert.Equal(t, []problemView{
		{Code: probNoMember, Severity: sevCritical, Text: "group b: no live member"},
		{Code: probDeadLetters, Severity: sevWarning, Text: "2 dead letters in the last 5m"},
	}, v.Problems)
	assert.Equal(t, sevOK, topicHealth(nil, nil, 0).State)
}
