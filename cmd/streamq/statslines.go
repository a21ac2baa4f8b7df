package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/streamq-dev/streamq/admin"
)

// heartbeatView is admin.MemberHeartbeat in "stats --json".
type heartbeatView struct {
	Name    string   `json:"name"`
	Live    bool     `json:"live"`
	Host    string   `json:"host"` // "" when its streamq version did not record it
	PID     int      `json:"pid"`
	Sent    jsonTime `json:"sent"` // its latest heartbeat
	Expires jsonTime `json:"expires"`
}

// lastMemberView is admin.LastMember in "stats --json".
type lastMemberView struct {
	Name string   `json:"name"`
	Host string   `json:"host"`
	PID  int      `json:"pid"`
	At   jsonTime `json:"at"`   // its last heartbeat, or when it left
	Left bool     `json:"left"` // it left, rather than stopped heartbeating
}

func heartbeatViews(hs []admin.MemberHeartbeat) []heartbeatView {
	out := make([]heartbeatView, 0, len(hs))
	for _, h := range hs {
		out = append(out, heartbeatView{Name: h.Name, Live: h.Live, Host: h.Host, PID: h.PID, Sent: jsonTime(h.Sent), Expires: jsonTime(h.Expires)})
	}
	return out
}

func newLastMemberView(m *admin.LastMember) *lastMemberView {
	if m == nil {
		return nil
	}
	return &lastMemberView{Name: m.Name, Host: m.Host, PID: m.PID, At: jsonTime(m.At), Left: m.Left}
}

// membersLines name the live members with their host and PID ("members: worker-1 (web-1 pid
// 4121)"); with none live, the member seen last and when, its last heartbeat ("seen") or its
// leave: "members: none live", "last member: worker-7 (web-1 pid 4121) seen 2026-12-03
// 12:00:01 UTC (3m0s ago)".
func (a *app) membersLines(s admin.GroupStats, now time.Time) []string {
	var live []string
	for _, h := range s.Heartbeats {
		if h.Live {
			live = append(live, memberText(h))
		}
	}
	if len(live) > 0 {
		return []string{"members: " + strings.Join(live, ", ")}
	}
	m := s.LastMember
	if m == nil {
		return []string{"members: none live"}
	}
	how := "seen"
	if m.Left {
		how = "left"
	}
	return []string{"members: none live", fmt.Sprintf("last member: %s %s %s (%s)", m, how, a.timeText(m.At), agoText(now.Sub(m.At)))}
}

// memberText is "worker-1 (web-1 pid 4121)", the name alone when no process is recorded.
func memberText(h admin.MemberHeartbeat) string {
	return admin.LastMember{Name: h.Name, Host: h.Host, PID: h.PID}.String()
}

// deliveryLine says whether the group delivers: paused by an operator, partitions waiting out
// an outage, an outage state unknown because Redis refuses writes, no live member, or running.
func deliveryLine(s admin.GroupStats) string {
	switch {
	case s.Pause.Paused:
		return "paused by an operator"
	case s.Outages > 0:
		return fmt.Sprintf("%d of %d partitions wait out a downstream outage", s.Outages, len(s.Partitions))
	case s.OutagesUnknown > 0:
		return admin.OutageUnknownText + " (" + unknownParts(s) + ")"
	case len(s.Members) == 0:
		return "no live member: nothing is delivered"
	}
	return "running"
}

// unknownParts is "partitions 0, 1: Redis refuses writes: NOREPLICAS ...".
func unknownParts(s admin.GroupStats) string {
	var ps []string
	var why error
	for _, p := range s.Partitions {
		if p.OutageUnknown != nil {
			ps, why = append(ps, strconv.Itoa(p.Partition)), p.OutageUnknown
		}
	}
	which := "partitions "
	if len(ps) == 1 {
		which = "partition "
	}
	return which + strings.Join(ps, ", ") + ": " + why.Error()
}

// heldLines are what the group holds back in Redis's memory and whether it is the cause: "memory
// held back: 400 unacked (~1.1 MiB), the most of any group", "Redis is full because of this
// group"; none without a MemoryUse.
func heldLines(topic, group string, v *memoryUseView, full bool) []string {
	if v == nil {
		return nil
	}
	g := groupMemoryView{Topic: topic, Group: group}
	for _, x := range v.Groups {
		if x.Group == group {
			g = x
		}
	}
	if c := v.Cause; c != nil && c.Topic == topic && c.Group == group {
		return []string{"memory held back: " + heldText(g) + ", the most of any group", pressure(full) + " because of this group"}
	}
	return []string{"memory held back: " + heldText(g), causeLine(topic, v, full, 0)}
}
