package outboxstatus

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Status is what the relays of one outbox last reported.
type Status struct {
	Name                  string
	Table, Group, Dialect string
	// Measured: some relay measured the lag; Pending, OldestAge and MeasuredAt are its
	// latest measurement.
	Measured   bool
	Pending    int64
	OldestAge  time.Duration
	MeasuredAt time.Time
	Moved      int64 // messages moved by every relay, since the status key was created
	ReportedAt time.Time
	ReportedBy string
	Interval   time.Duration
	Relays     []RelayStatus // by ID
	Now        time.Time     // the server's clock when the status was read
}

// RelayStatus is one relay's entry.
type RelayStatus struct {
	Relay
	ReportedAt time.Time
	Interval   time.Duration
	Moved      int64 // moved by this relay since it started
}

// relayJSON is a relay's entry as report.lua stores it.
type relayJSON struct {
	Host       string `json:"host"`
	PID        int    `json:"pid"`
	StartedAt  int64  `json:"startedAt"`
	ReportedAt int64  `json:"reportedAt"`
	IntervalMs int64  `json:"intervalMs"`
	Moved      int64  `json:"moved"`
}

// Names lists the outboxes that were ever reported under controlPrefix (some may have
// expired since: Read tells), sorted.
func Names(ctx context.Context, rdb redis.UniversalClient, controlPrefix string) ([]string, error) {
	names, err := rdb.SMembers(ctx, registryKey(controlPrefix)).Result()
	if err != nil {
		return nil, fmt.Errorf("list outboxes: %w", err)
	}
	slices.Sort(names)
	return names, nil
}

// Read returns the status of outbox name; false when no report of it is stored (never
// reported, or expired KeyTTL after the last report).
func Read(ctx context.Context, rdb redis.UniversalClient, controlPrefix, name string) (Status, bool, error) {
	k, err := KeysFor(controlPrefix, name)
	if err != nil {
		return Status{}, false, err
	}
	var status, relays *redis.MapStringStringCmd
	var now *redis.TimeCmd
	_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		status, relays, now = p.HGetAll(ctx, k.Status), p.HGetAll(ctx, k.Relays), p.Time(ctx)
		return nil
	})
	if err != nil {
		return Status{}, false, fmt.Errorf("read outbox %q: %w", name, err)
	}
	if len(status.Val()) == 0 {
		return Status{}, false, nil
	}
	s := decodeStatus(name, status.Val())
	s.Relays = decodeRelays(relays.Val())
	s.Now = now.Val()
	return s, true, nil
}

// decodeStatus reads the status hash; a field that does not parse reads as zero.
func decodeStatus(name string, h map[string]string) Status {
	s := Status{Name: name, Table: h["table"], Group: h["group"], Dialect: h["dialect"], ReportedBy: h["reportedBy"]}
	s.Moved = atoi(h["moved"])
	s.ReportedAt = msTime(h["reportedAt"])
	s.Interval = time.Duration(atoi(h["intervalMs"])) * time.Millisecond
	if _, ok := h["pending"]; ok {
		s.Measured = true
		s.Pending = atoi(h["pending"])
		s.OldestAge = time.Duration(atoi(h["oldestAgeMs"])) * time.Millisecond
		s.MeasuredAt = msTime(h["measuredAt"])
	}
	return s
}

// decodeRelays reads the relays hash, sorted by relay id; an entry that does not parse is
// left out.
func decodeRelays(h map[string]string) []RelayStatus {
	out := make([]RelayStatus, 0, len(h))
	for id, raw := range h {
		var r relayJSON
		if json.Unmarshal([]byte(raw), &r) != nil {
			continue
		}
		out = append(out, RelayStatus{
			Relay:      Relay{ID: id, Host: r.Host, PID: r.PID, StartedAt: time.UnixMilli(r.StartedAt)},
			ReportedAt: time.UnixMilli(r.ReportedAt),
			Interval:   time.Duration(r.IntervalMs) * time.Millisecond,
			Moved:      r.Moved,
		})
	}
	slices.SortFunc(out, func(a, b RelayStatus) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// msTime reads Unix ms; zero time for "" or garbage.
func msTime(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(n)
}
