package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/admin"
)

// groupView is one group of "groups --json": admin.GroupInfo.
type groupView struct {
	Name string `json:"name"`
	// Consumers are the live members; RedisConsumers the consumers Redis has, live or not.
	Consumers      int   `json:"consumers"`
	RedisConsumers int   `json:"redisConsumers"`
	Pending        int64 `json:"pending"`
	Lag            int64 `json:"lag"`
	// LagUnknown: some partition's lag was too large to count exactly; Lag is a lower bound.
	LagUnknown bool `json:"lagUnknown"`
	// TimeLagMs is the age of the oldest entry the group has still to deliver, PendingAgeMs
	// that of its oldest pending entry (the largest of the partitions').
	TimeLagMs    int64 `json:"timeLagMs"`
	PendingAgeMs int64 `json:"pendingAgeMs"`
	// Expired: no member was live for the group expiry on some partition, and retention no
	// longer waits for the group there; LastSeen is when a member last held a partition.
	Expired  bool   `json:"expired"`
	LastSeen string `json:"lastSeen,omitempty"`
}

func groupsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "groups TOPIC",
		Short: "List a topic's consumer groups with consumers, pending and lag",
		Long: `Lists the topic's consumer groups: live members (CONSUMERS), pending entries, LAG (the
entries each still has to deliver; other groups' retries, which it skips, do not count;
"+" marks a lower bound) and TIME LAG (the age of the oldest of them, on the Redis
server's clock). When a group has expired (no live member on some partition for the
group expiry, so retention no longer waits for it there; its offsets stay), an EXPIRED
column says when a member was last seen.`,
		Example:           "  streamq groups orders",
		GroupID:           groupGroups,
		Args:              argsExactly("TOPIC"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE: a.withAdmin(func(ctx context.Context, adm *admin.Admin, _ *cobra.Command, args []string) error {
			groups, err := adm.ConsumerGroups(ctx, args[0])
			if err != nil {
				return err
			}
			views := []groupView{}
			for _, g := range groups {
				views = append(views, groupView{Name: g.Name, Consumers: g.Consumers, RedisConsumers: g.RedisConsumers, Pending: g.Pending,
					Lag: g.Lag, LagUnknown: g.LagUnknown, TimeLagMs: ms(g.TimeLag), PendingAgeMs: ms(g.PendingAge),
					Expired: g.Expired, LastSeen: rfc3339(g.LastSeen)})
			}
			if a.json {
				return printJSON(a.stdout, views)
			}
			if len(views) == 0 {
				fmt.Fprintf(a.stdout, "topic %q has no consumer groups\n", args[0])
				return nil
			}
			return printGroups(a.stdout, a.fitWidth(), groups)
		}),
	}
	a.addJSONFlag(cmd)
	return cmd
}

// printGroups is the groups table fitted to width (0: no limit), the names cut with "…"; the
// EXPIRED column only when some group expired.
func printGroups(w io.Writer, width int, groups []admin.GroupInfo) error {
	expired := false
	for _, g := range groups {
		expired = expired || g.Expired
	}
	head := []any{"GROUP", "CONSUMERS", "PENDING", "LAG", "TIME LAG"}
	if expired {
		head = append(head, "EXPIRED")
	}
	t := newTable(w).fit(width, 0)
	t.row(head...)
	for _, g := range groups {
		row := []any{g.Name, g.Consumers, g.Pending, lagText(g.Lag, !g.LagUnknown), human(g.TimeLag)}
		if expired {
			row = append(row, expiredText(g.Expired, g.LastSeen))
		}
		t.row(row...)
	}
	return t.flush()
}

// expiredText is a group's EXPIRED cell: "-", or when a member was last seen.
func expiredText(expired bool, lastSeen time.Time) string {
	switch {
	case !expired:
		return "-"
	case lastSeen.IsZero():
		return "yes"
	}
	return "seen " + human(time.Since(lastSeen).Round(time.Second)) + " ago"
}

// lagText shows a lag, with "+" when it is a lower bound.
func lagText(n int64, exact bool) string {
	s := strconv.FormatInt(n, 10)
	if !exact {
		s += "+"
	}
	return s
}

// statsView is "stats --json": admin.GroupStats.
type statsView struct {
	Topic     string   `json:"topic"`
	Group     string   `json:"group"`
	Members   []string `json:"members"` // live members, sorted
	Pending   int64    `json:"pending"`
	Lag       int64    `json:"lag"`
	TimeLagMs int64    `json:"timeLagMs"` // the largest of the partitions'
	// PendingAgeMs is the age of the oldest pending entry, the largest of the partitions'.
	PendingAgeMs int64  `json:"pendingAgeMs"`
	TrimLost     int64  `json:"trimLost"`  // entries hard trimming removed unacked
	HoldsBack    int64  `json:"holdsBack"` // entries over max length the group holds back
	Paused       bool   `json:"paused"`    // an operator paused the group (streamq pause)
	Expired      bool   `json:"expired"`   // retention no longer waits for it on some partition
	PausedAt     string `json:"pausedAt,omitempty"`
	Outages      int    `json:"outages"` // partitions waiting out a downstream outage
	// OutagesUnknown is how many partitions have an unknown outage state: no record, and
	// Redis refuses its write.
	OutagesUnknown int `json:"outagesUnknown"`
	// Delivery says whether the group delivers: "running", "paused by an operator", the
	// partitions waiting out an outage, "outage state unknown: Redis refuses writes (…)", or
	// that no member is live.
	Delivery string `json:"delivery"`
	// Heartbeats are the members of the membership, live or not, with their host and PID;
	// LastMember is the member seen last (null when none is recorded).
	Heartbeats []heartbeatView      `json:"heartbeats"`
	LastMember *lastMemberView      `json:"lastMember"`
	Partitions []partitionStatsView `json:"partitions"`
	// Memory is the Redis servers' memory and whether the topic's publishes are refused.
	Memory memoryView `json:"memory"`
	// MemoryUse is who holds the memory, while some server is at or above the high-water
	// mark; absent otherwise.
	MemoryUse *memoryUseView `json:"memoryUse,omitempty"`
}

// partitionStatsView is admin.PartitionGroupStats.
type partitionStatsView struct {
	Partition       int    `json:"partition"`
	Pending         int64  `json:"pending"`
	Lag             int64  `json:"lag"`
	LagExact        bool   `json:"lagExact"`
	LastDeliveredID string `json:"lastDeliveredId"`
	EntriesRead     int64  `json:"entriesRead"`
	RedisConsumers  int    `json:"redisConsumers"` // Redis consumers of the group there, live or not
	LeaseOwner      string `json:"leaseOwner"`     // "" when the partition is not leased
	LeaseTTLMs      int64  `json:"leaseTtlMs"`
	// TimeLagMs is the age of OldestID, the oldest entry the group has still to deliver
	// ("" when none); PendingAgeMs that of the oldest pending entry; Skipped the other
	// groups' retries after the position, which the group skips.
	TimeLagMs      int64  `json:"timeLagMs"`
	OldestID       string `json:"oldestId"`
	PendingAgeMs   int64  `json:"pendingAgeMs"`
	Skipped        int64  `json:"skipped"`
	CommitFrontier string `json:"commitFrontier"` // "" when the group acked nothing there
	// TrimLost is how many entries hard trimming removed before the group acked them.
	TrimLost int64 `json:"trimLost"`
	// HoldsBack is how many entries over the topic's max length the group holds back there
	// (0 when another group, or none, stops the trim).
	HoldsBack int64 `json:"holdsBack"`
	// LastSeen is when a member last held the partition; ExpiredSince, when set, since when
	// retention no longer waits for the group there (no live member for the group expiry).
	LastSeen     string `json:"lastSeen,omitempty"`
	ExpiredSince string `json:"expiredSince,omitempty"`
	// Outage is the downstream outage the lease holder waits out there, absent when none.
	Outage *outageView `json:"outage,omitempty"`
	// OutageUnknown says why the outage state is unknown there, absent when it is known.
	OutageUnknown string `json:"outageUnknown,omitempty"`
}

func newStatsView(s admin.GroupStats) statsView {
	v := statsView{
		Topic: s.Topic, Group: s.Group, Members: nonNil(s.Members), Pending: s.Pending, Lag: s.Lag,
		TimeLagMs: ms(s.TimeLag), PendingAgeMs: ms(s.PendingAge), TrimLost: s.TrimLost, HoldsBack: s.HoldsBack, Partitions: []partitionStatsView{},
		Paused: s.Pause.Paused, Expired: s.Expired, Outages: s.Outages, OutagesUnknown: s.OutagesUnknown,
		Delivery: deliveryLine(s), Heartbeats: heartbeatViews(s.Heartbeats), LastMember: newLastMemberView(s.LastMember),
	}
	if s.Pause.Paused {
		v.PausedAt = rfc3339(s.Pause.Since)
	}
	for _, p := range s.Partitions {
		v.Partitions = append(v.Partitions, partitionStatsView{
			Partition: p.Partition, Pending: p.Pending, Lag: p.Lag, LagExact: p.LagExact,
			LastDeliveredID: p.LastDeliveredID, EntriesRead: p.EntriesRead, RedisConsumers: p.Consumers,
			LeaseOwner: p.LeaseOwner, LeaseTTLMs: ms(p.LeaseTTL), TimeLagMs: ms(p.TimeLag), OldestID: p.OldestID,
			PendingAgeMs: ms(p.PendingAge), Skipped: p.Skipped,
			CommitFrontier: p.CommitFrontier, TrimLost: p.TrimLost, HoldsBack: p.HoldsBack,
			LastSeen: rfc3339(p.LastSeen), ExpiredSince: rfc3339(p.ExpiredSince), Outage: newOutageView(p.Outage),
			OutageUnknown: errText(p.OutageUnknown),
		})
	}
	return v
}

// errText is err's text, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func statsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "stats TOPIC GROUP",
		Short: "Show a group's pending, lag, lease owners, time lag and frontier per partition",
		Long: `Shows one consumer group of a topic, per partition: pending entries (delivered, not
acked) and the age of the oldest (PENDING AGE), lag (entries the group still has to
deliver, other groups' retries not counted; "+" marks a lower bound), the time lag (the age
of the oldest of them, on the Redis server's clock) and the member holding the partition's
lease (OWNER), then the totals. -o wide adds what is left of the lease, the group's
position (LAST DELIVERED), the commit frontier (highest acked id) and the other groups'
retries it skips. When the topic's trim policy is hard and trimming removed entries before
the group acked them, a TRIM LOST column counts them. When the group's position stops the
trim of a partition over the topic's max length, a HOLDS BACK column counts the entries
over it that the group holds back (they go once it catches up or is deleted). Above the
table: the Redis server's used and max memory (each master's on a Cluster), and "full:
publishing refused since …" while Redis refuses publishes to the topic for memory, and a
line for each partition waiting out a downstream outage ("partition 2 paused: downstream
failing since …, next probe in …"): its handler marked its failures with streamq.Outage,
so the partition hands out nothing until a probe succeeds. The members line names each live
member with its host and PID or, with none live, the member seen last and when (its last
heartbeat, or its leave). The delivery line says "running", or why not: paused, waiting out
an outage, "outage state unknown: Redis refuses writes" (where Redis refuses the outage
record's write, a partition may wait out an outage nobody could record), or no live member.
At or above the memory high-water mark, "memory held back" says what the group holds back
(unacked messages and retries, approximate sizes) and which group holds back the most.`,
		Example: `  streamq stats orders payments
  streamq stats orders payments -o wide --utc`,
		GroupID:           groupGroups,
		Args:              argsExactly("TOPIC", "GROUP"),
		ValidArgsFunction: a.completeArgs(argTopic, argGroup),
		RunE:              a.withAdmin(a.stats),
	}
	a.addJSONFlag(cmd)
	return cmd
}

// statsHead are the lines stats prints above its table.
type statsHead struct {
	members []string
	outages []string
	memory  []memoryLine
	held    []string // none below the high-water mark
}

// stats is "streamq stats TOPIC GROUP".
func (a *app) stats(ctx context.Context, adm *admin.Admin, _ *cobra.Command, args []string) error {
	s, err := adm.GroupStats(ctx, args[0], args[1])
	if err != nil {
		return err
	}
	m, err := adm.TopicMemory(ctx, args[0])
	if err != nil {
		return err
	}
	v := newStatsView(s)
	v.Memory = newMemoryView(m)
	if v.MemoryUse, err = memoryUseOf(ctx, adm, args[0], m); err != nil {
		return err
	}
	if a.json {
		return printJSON(a.stdout, v)
	}
	head := statsHead{members: a.membersLines(s, s.Time), outages: a.outageLines(s, time.Now()),
		memory: a.memoryLines(m), held: heldLines(args[0], args[1], v.MemoryUse, m.Full())}
	return a.printStats(s, v, head)
}

func (a *app) printStats(s admin.GroupStats, v statsView, head statsHead) error {
	w, wide := a.stdout, a.wide
	fmt.Fprintf(w, "group %q on topic %q\n%s\ndelivery: %s\n", v.Group, v.Topic, strings.Join(head.members, "\n"), v.Delivery)
	if v.Paused {
		fmt.Fprintf(w, "paused by an operator since %s (streamq resume %s %s)\n", a.timeText(s.Pause.Since), v.Topic, v.Group)
	}
	if v.Expired {
		fmt.Fprintf(w, "expired on partitions %s: no live member for the group expiry, retention no longer waits for it\n", expiredParts(s))
	}
	for _, l := range head.outages {
		fmt.Fprintln(w, l)
	}
	for _, l := range head.memory {
		fmt.Fprintf(w, "%s: %s\n", l.name, l.value)
	}
	for _, l := range head.held {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w)
	// The columns shown only when hard trimming cost the group entries, or it holds some back.
	extra := statsExtras{lost: v.TrimLost > 0, held: v.HoldsBack > 0}
	if wide {
		return printWideStats(w, s, v, extra)
	}
	t := newTable(w).fit(a.width(), 5)
	t.row(extra.cells([]any{"PARTITION", "PENDING", "PENDING AGE", "LAG", "TIME LAG", "OWNER"}, "TRIM LOST", "HOLDS BACK")...)
	exact := true
	for _, p := range s.Partitions {
		exact = exact && p.LagExact
		row := []any{p.Partition, p.Pending, human(p.PendingAge), lagText(p.Lag, p.LagExact), human(p.TimeLag), orDash(p.LeaseOwner)}
		t.row(extra.cells(row, p.TrimLost, p.HoldsBack)...)
	}
	t.row(extra.cells([]any{"TOTAL", v.Pending, human(s.PendingAge), lagText(v.Lag, exact), human(s.TimeLag), ""}, v.TrimLost, v.HoldsBack)...)
	return t.flush()
}

// expiredParts lists the partitions where the group expired.
func expiredParts(s admin.GroupStats) string {
	var ps []string
	for _, p := range s.Partitions {
		if !p.ExpiredSince.IsZero() {
			ps = append(ps, strconv.Itoa(p.Partition))
		}
	}
	return strings.Join(ps, ", ")
}

// printWideStats is the stats table of -o wide: every column.
func printWideStats(w io.Writer, s admin.GroupStats, v statsView, extra statsExtras) error {
	t := newTable(w)
	t.row(extra.cells([]any{"PARTITION", "PENDING", "PENDING AGE", "LAG", "SKIPPED", "TIME LAG", "LEASE OWNER", "LEASE TTL",
		"LAST DELIVERED", "FRONTIER"}, "TRIM LOST", "HOLDS BACK")...)
	exact := true
	var skipped int64
	for _, p := range s.Partitions {
		exact = exact && p.LagExact
		skipped += p.Skipped
		row := []any{p.Partition, p.Pending, human(p.PendingAge), lagText(p.Lag, p.LagExact), p.Skipped, human(p.TimeLag),
			orDash(p.LeaseOwner), human(p.LeaseTTL), shownID(p.LastDeliveredID), orDash(p.CommitFrontier)}
		t.row(extra.cells(row, p.TrimLost, p.HoldsBack)...)
	}
	t.row(extra.cells([]any{"TOTAL", v.Pending, human(s.PendingAge), lagText(v.Lag, exact), skipped, human(s.TimeLag),
		"", "", "", ""}, v.TrimLost, v.HoldsBack)...)
	return t.flush()
}

// statsExtras are the stats columns shown only when some partition has a value there.
type statsExtras struct{ lost, held bool }

// cells appends to row the TRIM LOST and HOLDS BACK cells of the columns shown.
func (x statsExtras) cells(row []any, lost, held any) []any {
	if x.lost {
		row = append(row, lost)
	}
	if x.held {
		row = append(row, held)
	}
	return row
}

// lagView is "lag --json": admin.GroupLag.
type lagView struct {
	Topic        string             `json:"topic"`
	Group        string             `json:"group"`
	Lag          int64              `json:"lag"`      // summed over partitions
	LagExact     bool               `json:"lagExact"` // false: some partition's lag is a lower bound
	Skipped      int64              `json:"skipped"`  // other groups' retries, not lag
	TimeLagMs    int64              `json:"timeLagMs"`
	Pending      int64              `json:"pending"`
	PendingAgeMs int64              `json:"pendingAgeMs"`
	Time         jsonTime           `json:"time"` // the Redis server's clock the ages are measured to
	Partitions   []partitionLagView `json:"partitions"`
}

// partitionLagView is admin.PartitionLag.
type partitionLagView struct {
	Partition       int    `json:"partition"`
	Lag             int64  `json:"lag"`
	LagExact        bool   `json:"lagExact"`
	Skipped         int64  `json:"skipped"`
	OldestID        string `json:"oldestId"` // the oldest entry still to deliver, "" when none
	TimeLagMs       int64  `json:"timeLagMs"`
	Pending         int64  `json:"pending"`
	OldestPendingID string `json:"oldestPendingId"`
	PendingAgeMs    int64  `json:"pendingAgeMs"`
	LastDeliveredID string `json:"lastDeliveredId"`
}

func newLagView(g admin.GroupLag) lagView {
	v := lagView{Topic: g.Topic, Group: g.Group, Lag: g.Lag, LagExact: g.Exact, Skipped: g.Skipped, TimeLagMs: ms(g.TimeLag),
		Pending: g.Pending, PendingAgeMs: ms(g.PendingAge), Time: jsonTime(g.Time), Partitions: []partitionLagView{}}
	for _, p := range g.Partitions {
		v.Partitions = append(v.Partitions, partitionLagView{
			Partition: p.Partition, Lag: p.Lag, LagExact: p.Exact, Skipped: p.Skipped, OldestID: p.OldestID,
			TimeLagMs: ms(p.TimeLag), Pending: p.Pending, OldestPendingID: p.OldestPendingID, PendingAgeMs: ms(p.PendingAge),
			LastDeliveredID: p.LastDeliveredID,
		})
	}
	return v
}

func lagCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lag TOPIC GROUP",
		Short: "Show how far a group is behind per partition: entries, time lag, pending and its age",
		Long: `Shows, per partition and in total, how far the group is behind: LAG, the entries it still
has to deliver (other groups' retries, which it skips, are not counted: SKIPPED, with
-o wide); TIME LAG, the age of the oldest of them on the Redis server's clock (a group
reset to the start of an hour-old backlog is an hour behind); PENDING, the entries
delivered and not acked, and PENDING AGE, the age of the oldest. "+" marks a lower bound
(a lag Redis cannot report and too large to count). The exit code is 0 whatever the lag.
The same figures are admin.GroupLag's and the Prometheus lag collector's.`,
		Example: `  streamq lag orders payments
  streamq lag orders payments -o json | jq .timeLagMs`,
		GroupID:           groupGroups,
		Args:              argsExactly("TOPIC", "GROUP"),
		ValidArgsFunction: a.completeArgs(argTopic, argGroup),
		RunE: a.withAdmin(func(ctx context.Context, adm *admin.Admin, _ *cobra.Command, args []string) error {
			g, err := adm.GroupLag(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			if a.json {
				return printJSON(a.stdout, newLagView(g))
			}
			return a.printLag(g)
		}),
	}
	a.addJSONFlag(cmd)
	return cmd
}

func (a *app) printLag(g admin.GroupLag) error {
	header := []any{"PARTITION", "LAG", "TIME LAG", "PENDING", "PENDING AGE"}
	if a.wide {
		header = append(header, "SKIPPED", "OLDEST ID", "LAST DELIVERED")
	}
	t := newTable(a.stdout)
	t.row(header...)
	for _, p := range g.Partitions {
		row := []any{p.Partition, lagText(p.Lag, p.Exact), human(p.TimeLag), p.Pending, human(p.PendingAge)}
		if a.wide {
			row = append(row, p.Skipped, orDash(p.OldestID), shownID(p.LastDeliveredID))
		}
		t.row(row...)
	}
	total := []any{"TOTAL", lagText(g.Lag, g.Exact), human(g.TimeLag), g.Pending, human(g.PendingAge)}
	if a.wide {
		total = append(total, g.Skipped, "", "")
	}
	t.row(total...)
	return t.flush()
}

// frontierView is "frontier --json": admin.CommitFrontier as a list.
type frontierView struct {
	Topic string `json:"topic"`
	Group string `json:"group"`
	// Partitions lists the partitions where the group acked something, in order.
	Partitions []partitionFrontierView `json:"partitions"`
}

type partitionFrontierView struct {
	Partition      int    `json:"partition"`
	CommitFrontier string `json:"commitFrontier"`
}

func frontierCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "frontier TOPIC GROUP",
		Example: "  streamq frontier orders payments",
		Short:   "Show a group's commit frontier (highest acked id) per partition",
		Long: `Shows, per partition, the highest stream id the group has acked (the commit frontier,
which only moves forward). Partitions where the group acked nothing yet are not listed.`,
		GroupID:           groupGroups,
		Args:              argsExactly("TOPIC", "GROUP"),
		ValidArgsFunction: a.completeArgs(argTopic, argGroup),
		RunE: a.withAdmin(func(ctx context.Context, adm *admin.Admin, _ *cobra.Command, args []string) error {
			f, err := adm.CommitFrontier(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			v := frontierView{Topic: args[0], Group: args[1], Partitions: []partitionFrontierView{}}
			for p, id := range f {
				v.Partitions = append(v.Partitions, partitionFrontierView{Partition: p, CommitFrontier: id})
			}
			sort.Slice(v.Partitions, func(i, j int) bool { return v.Partitions[i].Partition < v.Partitions[j].Partition })
			if a.json {
				return printJSON(a.stdout, v)
			}
			if len(v.Partitions) == 0 {
				fmt.Fprintf(a.stdout, "group %q has acked nothing on topic %q yet\n", v.Group, v.Topic)
				return nil
			}
			t := newTable(a.stdout, "PARTITION", "FRONTIER")
			for _, p := range v.Partitions {
				t.row(p.Partition, p.CommitFrontier)
			}
			return t.flush()
		}),
	}
	a.addJSONFlag(cmd)
	return cmd
}
