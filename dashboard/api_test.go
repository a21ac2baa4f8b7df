package dashboard_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/dashboard"
	"github.com/streamq-dev/streamq/internal/retention"
)

// The API's JSON shapes, as a client reads them.
type (
	topicsJSON struct {
		Topics []struct {
			Topic       string   `json:"topic"`
			Partitions  int      `json:"partitions"`
			Length      int64    `json:"length"`
			Groups      int      `json:"groups"`
			DLQLength   int64    `json:"dlqLength"`
			PublishRate *float64 `json:"publishRate"`
			Health      struct {
				State    string `json:"state"`
				Problems []struct {
					Code string `json:"code"`
					Text string `json:"text"`
				} `json:"problems"`
			} `json:"health"`
			WorstLag *struct {
				Group     string `json:"group"`
				Lag       int64  `json:"lag"`
				TimeLagMs int64  `json:"timeLagMs"`
			} `json:"worstLag"`
		} `json:"topics"`
	}
	groupJSON struct {
		Name        string   `json:"name"`
		Consumers   int      `json:"consumers"`
		Pending     int64    `json:"pending"`
		Lag         int64    `json:"lag"`
		LagUnknown  bool     `json:"lagUnknown"`
		ConsumeRate *float64 `json:"consumeRate"`
	}
	partitionGroupJSON struct {
		Group           string `json:"group"`
		Exists          bool   `json:"exists"`
		Owner           string `json:"owner"`
		LeaseTTLMs      int64  `json:"leaseTtlMs"`
		Pending         int64  `json:"pending"`
		Lag             int64  `json:"lag"`
		LagExact        bool   `json:"lagExact"`
		LastDeliveredID string `json:"lastDeliveredId"`
	}
	topicJSON struct {
		Topic        string      `json:"topic"`
		Partitions   int         `json:"partitions"`
		Length       int64       `json:"length"`
		FirstID      string      `json:"firstId"`
		LastID       string      `json:"lastId"`
		DLQLength    int64       `json:"dlqLength"`
		Groups       []groupJSON `json:"groups"`
		PerPartition []struct {
			Partition int                  `json:"partition"`
			Length    int64                `json:"length"`
			FirstID   string               `json:"firstId"`
			LastID    string               `json:"lastId"`
			DLQLength int64                `json:"dlqLength"`
			Groups    []partitionGroupJSON `json:"groups"`
		} `json:"perPartition"`
	}
)

// topicFixture: topic "orders" with 4 partitions holding 8, 8, 7, 7 entries; group "g" read
// 8 entries of partition 0 as consumer "c1" (pending, not acked) and member "member-a" holds
// its lease there with a live heartbeat; group "idle" read nothing.
func topicFixture(t *testing.T) (*env, [][]string) {
	e := newEnv(t)
	require.NoError(t, e.adm.CreateTopic(e.ctx, "orders", 4))
	e.publishRoundRobin("orders", 30, 4)
	for p := range 4 {
		require.NoError(t, e.client.XGroupCreate(e.ctx, e.streamKey("orders", p), "g", "0-0").Err())
		require.NoError(t, e.client.XGroupCreate(e.ctx, e.streamKey("orders", p), "idle", "0-0").Err())
	}
	_, err := e.client.XReadGroup(e.ctx, &redis.XReadGroupArgs{
		Group: "g", Consumer: "c1", Streams: []string{e.streamKey("orders", 0), ">"}, Count: 8,
	}).Result()
	require.NoError(t, err)
	require.NoError(t, e.client.Set(e.ctx, e.space.Lease("orders", 0, "g"), "member-a#n1.1", time.Minute).Err())
	expiry := float64(time.Now().Add(time.Hour).UnixMilli())
	require.NoError(t, e.client.ZAdd(e.ctx, e.space.Members("orders", "g"), redis.Z{Score: expiry, Member: "member-a"}).Err())
	ids := make([][]string, 4)
	for p := range ids {
		ids[p] = e.ids("orders", p)
	}
	return e, ids
}

func TestTopicsAndTopic(t *testing.T) {
	e, ids := topicFixture(t)
	require.NoError(t, e.adm.CreateTopic(e.ctx, "empty", 2))
	s := e.serve(dashboard.Options{})

	var list topicsJSON
	s.getJSON("/api/topics", &list)
	require.Len(t, list.Topics, 2)
	assert.Equal(t, "empty", list.Topics[1].Topic, "worst first: orders has a group with a backlog and no live member")
	assert.Equal(t, 2, list.Topics[1].Partitions)
	assert.Equal(t, int64(0), list.Topics[1].Length)
	assert.Equal(t, "ok", list.Topics[1].Health.State)
	o := list.Topics[0]
	assert.Equal(t, "orders", o.Topic)
	assert.Equal(t, 4, o.Partitions)
	assert.Equal(t, int64(30), o.Length)
	assert.Equal(t, 2, o.Groups)
	assert.Equal(t, int64(0), o.DLQLength)
	assert.Nil(t, o.PublishRate, "no rate before two samples")
	assert.Equal(t, "critical", o.Health.State)
	require.NotEmpty(t, o.Health.Problems)
	assert.Equal(t, "no-live-member", o.Health.Problems[0].Code)
	assert.Equal(t, "group idle: no live member: 30 messages waiting and nobody consumes them; no member seen yet", o.Health.Problems[0].Text)
	require.NotNil(t, o.WorstLag)
	assert.Equal(t, "idle", o.WorstLag.Group)
	assert.Equal(t, int64(30), o.WorstLag.Lag)
	assert.Positive(t, o.WorstLag.TimeLagMs, "the age of the oldest undelivered message")

	var topic topicJSON
	s.getJSON("/api/topics/orders", &topic)
	assert.Equal(t, 4, topic.Partitions)
	assert.Equal(t, int64(30), topic.Length)
	assert.Equal(t, []groupJSON{
		{Name: "g", Consumers: 1, Pending: 8, Lag: 22},
		{Name: "idle", Consumers: 0, Pending: 0, Lag: 30},
	}, topic.Groups)
	require.Len(t, topic.PerPartition, 4)
	for p, pp := range topic.PerPartition {
		assert.Equal(t, p, pp.Partition)
		assert.Equal(t, int64(len(ids[p])), pp.Length)
		assert.Equal(t, ids[p][0], pp.FirstID)
		assert.Equal(t, ids[p][len(ids[p])-1], pp.LastID)
		require.Len(t, pp.Groups, 2)
		g, idle := pp.Groups[0], pp.Groups[1]
		assert.Equal(t, "g", g.Group)
		assert.True(t, g.Exists)
		assert.Equal(t, partitionGroupJSON{Group: "idle", Exists: true, Lag: int64(len(ids[p])), LagExact: true, LastDeliveredID: "0-0"}, idle)
		if p == 0 {
			assert.Equal(t, "member-a", g.Owner)
			assert.Greater(t, g.LeaseTTLMs, int64(50000))
			assert.Equal(t, int64(8), g.Pending)
			assert.Equal(t, int64(0), g.Lag)
			assert.Equal(t, ids[0][7], g.LastDeliveredID)
		} else {
			assert.Empty(t, g.Owner)
			assert.Equal(t, int64(len(ids[p])), g.Lag)
		}
	}
}

func TestGroupEndpoints(t *testing.T) {
	e, ids := topicFixture(t)
	s := e.serve(dashboard.Options{})

	var groups struct {
		Groups []groupJSON `json:"groups"`
	}
	s.getJSON("/api/topics/orders/groups", &groups)
	require.Len(t, groups.Groups, 2)
	assert.Equal(t, "g", groups.Groups[0].Name)

	var g struct {
		Topic   string `json:"topic"`
		Group   string `json:"group"`
		Members []struct {
			Name       string `json:"name"`
			Live       bool   `json:"live"`
			Partitions []int  `json:"partitions"`
		} `json:"members"`
		Pending    int64 `json:"pending"`
		Lag        int64 `json:"lag"`
		Unowned    []int `json:"unowned"`
		Partitions []struct {
			Partition   int    `json:"partition"`
			Pending     int64  `json:"pending"`
			Lag         int64  `json:"lag"`
			EntriesRead int64  `json:"entriesRead"`
			LeaseOwner  string `json:"leaseOwner"`
			TimeLagMs   int64  `json:"timeLagMs"`
		} `json:"partitions"`
	}
	s.getJSON("/api/topics/orders/groups/g", &g)
	assert.Equal(t, "g", g.Group)
	require.Len(t, g.Members, 1)
	assert.Equal(t, "member-a", g.Members[0].Name)
	assert.True(t, g.Members[0].Live)
	assert.Equal(t, []int{0}, g.Members[0].Partitions)
	assert.Equal(t, int64(8), g.Pending)
	assert.Equal(t, int64(22), g.Lag)
	assert.Equal(t, []int{1, 2, 3}, g.Unowned)
	require.Len(t, g.Partitions, 4)
	assert.Equal(t, "member-a", g.Partitions[0].LeaseOwner)
	assert.Equal(t, int64(8), g.Partitions[0].EntriesRead)
	assert.Equal(t, int64(8), g.Partitions[1].Lag)

	var pend struct {
		Entries []struct {
			Partition  int    `json:"partition"`
			ID         string `json:"id"`
			Consumer   string `json:"consumer"`
			IdleMs     int64  `json:"idleMs"`
			Deliveries int64  `json:"deliveries"`
		} `json:"entries"`
	}
	s.getJSON("/api/topics/orders/groups/g/pending?sort=id&limit=5", &pend)
	require.Len(t, pend.Entries, 5)
	for i, p := range pend.Entries {
		assert.Equal(t, 0, p.Partition)
		assert.Equal(t, ids[0][i], p.ID)
		assert.Equal(t, "c1", p.Consumer)
		assert.Equal(t, int64(1), p.Deliveries)
		assert.GreaterOrEqual(t, p.IdleMs, int64(0))
	}
	s.getJSON("/api/topics/orders/groups/g/pending?minIdleMs=3600000", &pend)
	assert.Empty(t, pend.Entries)
}

// groupPageJSON is what the group page reads of api/topics/{topic}/groups/{group} about
// the group's health and its members' heartbeats.
type groupPageJSON struct {
	Health   healthJSON `json:"health"`
	Time     time.Time  `json:"time"`
	LastSeen *time.Time `json:"lastSeen"`
	Members  []struct {
		Name             string     `json:"name"`
		Live             bool       `json:"live"`
		Partitions       []int      `json:"partitions"`
		HeartbeatExpires *time.Time `json:"heartbeatExpires"`
	} `json:"members"`
	PendingAgeMs int64 `json:"pendingAgeMs"`
}

type healthJSON struct {
	State    string        `json:"state"`
	Problems []problemJSON `json:"problems"`
}

type problemJSON struct {
	Code     string     `json:"code"`
	Severity string     `json:"severity"`
	Text     string     `json:"text"`
	Since    *time.Time `json:"since"`
	Next     string     `json:"next"`
	Command  string     `json:"command"`
	Group    string     `json:"group"`
	Detail   string     `json:"detail"`
}

// TestGroupHealthHeadline: the group endpoint carries the group's health as the Topics page
// judges it, each problem with since when and its next step, and every member of the
// membership with its heartbeat: "idle" has a backlog, no live member, a member that
// crashed 12 minutes ago and was last seen on a partition then; "g" has a live member.
func TestGroupHealthHeadline(t *testing.T) {
	e, _ := topicFixture(t)
	now, err := e.client.Time(e.ctx).Result()
	require.NoError(t, err)
	crashed := now.Add(-12 * time.Minute).Truncate(time.Millisecond)
	require.NoError(t, e.client.ZAdd(e.ctx, e.space.Members("orders", "idle"), redis.Z{Score: float64(crashed.UnixMilli()), Member: "worker-7"}).Err())
	for p := range 4 {
		_, err := retention.MarkSeen(e.ctx, e.client, e.streamKey("orders", p), "idle", crashed)
		require.NoError(t, err)
	}
	s := e.serve(dashboard.Options{})

	var idle groupPageJSON
	s.getJSON("/api/topics/orders/groups/idle", &idle)
	assert.Equal(t, "critical", idle.Health.State)
	require.Len(t, idle.Health.Problems, 1)
	p := idle.Health.Problems[0]
	assert.Equal(t, "no-live-member", p.Code)
	assert.Contains(t, p.Text, "no live member: 30 messages waiting and nobody consumes them; no member seen since "+crashed.UTC().Format("2006-01-02 15:04:05 UTC")+" (12m")
	require.NotNil(t, p.Since)
	assert.Equal(t, crashed.UnixMilli(), p.Since.UnixMilli())
	assert.Equal(t, "start or restart a Subscriber of group idle; see it live", p.Next)
	assert.Equal(t, "streamq groups orders", p.Command)
	require.NotNil(t, idle.LastSeen)
	assert.Equal(t, crashed.UnixMilli(), idle.LastSeen.UnixMilli())
	assert.WithinDuration(t, now, idle.Time, 10*time.Second)
	require.Len(t, idle.Members, 1)
	m := idle.Members[0]
	assert.Equal(t, "worker-7", m.Name)
	assert.False(t, m.Live)
	assert.Equal(t, []int{}, m.Partitions)
	require.NotNil(t, m.HeartbeatExpires)
	assert.Equal(t, crashed.UnixMilli(), m.HeartbeatExpires.UnixMilli())

	var list struct {
		Topics []struct {
			ConsumerGroups []struct {
				Name   string     `json:"name"`
				Health healthJSON `json:"health"`
			} `json:"consumerGroups"`
		} `json:"topics"`
	}
	s.getJSON("/api/topics", &list)
	require.Len(t, list.Topics, 1)
	require.Len(t, list.Topics[0].ConsumerGroups, 2)
	assert.Equal(t, "idle", list.Topics[0].ConsumerGroups[1].Name)
	assert.Equal(t, list.Topics[0].ConsumerGroups[1].Health, idle.Health, "the Topics page's rules")

	var g groupPageJSON
	s.getJSON("/api/topics/orders/groups/g", &g)
	assert.Equal(t, "ok", g.Health.State)
	assert.Empty(t, g.Health.Problems)
	require.Len(t, g.Members, 1)
	assert.True(t, g.Members[0].Live)
	require.NotNil(t, g.Members[0].HeartbeatExpires)
	assert.True(t, g.Members[0].HeartbeatExpires.After(g.Time), "a live member's heartbeat expires later")
	assert.Positive(t, g.PendingAgeMs, "8 entries pending")
}

func TestMessages(t *testing.T) {
	e, ids := topicFixture(t)
	s := e.serve(dashboard.Options{PreviewBytes: 64})
	type entries struct {
		Entries []struct {
			Partition int               `json:"partition"`
			ID        string            `json:"id"`
			UUID      string            `json:"uuid"`
			Metadata  map[string]string `json:"metadata"`
			Payload   struct {
				Size     int    `json:"size"`
				Encoding string `json:"encoding"`
				Preview  string `json:"preview"`
			} `json:"payload"`
		} `json:"entries"`
	}
	var recent entries
	s.getJSON("/api/topics/orders/messages?limit=3", &recent)
	want, err := e.adm.ListRecent(e.ctx, "orders", 3)
	require.NoError(t, err)
	require.Len(t, recent.Entries, 3)
	for i, got := range recent.Entries {
		assert.Equal(t, want[i].Partition, got.Partition)
		assert.Equal(t, want[i].ID, got.ID)
		assert.Equal(t, want[i].UUID, got.UUID)
		assert.Equal(t, string(want[i].Payload), got.Payload.Preview)
		assert.Equal(t, want[i].Metadata["n"], got.Metadata["n"])
		assert.Equal(t, "text", got.Payload.Encoding)
		assert.Equal(t, 3, got.Payload.Size)
	}

	var part entries
	s.getJSON("/api/topics/orders/messages?partition=1&limit=2", &part)
	require.Len(t, part.Entries, 2)
	assert.Equal(t, ids[1][0], part.Entries[0].ID)
	assert.Equal(t, "m1", part.Entries[0].Payload.Preview)
	s.getJSON("/api/topics/orders/messages?partition=1&limit=1&reverse=1", &part)
	assert.Equal(t, ids[1][len(ids[1])-1], part.Entries[0].ID)
}

func TestErrors(t *testing.T) {
	e, _ := topicFixture(t)
	s := e.serve(dashboard.Options{})
	tests := []struct {
		path   string
		status int
	}{
		{"/api/topics/nope", http.StatusNotFound},
		{"/api/topics/nope/rates", http.StatusNotFound},
		{"/api/topics/nope/messages", http.StatusNotFound},
		{"/api/topics/nope/dlq", http.StatusNotFound},
		{"/api/topics/orders/groups/nope", http.StatusNotFound},
		{"/api/topics/orders/groups/nope/pending", http.StatusNotFound},
		{"/api/topics/orders/dlq/0/1-1", http.StatusNotFound},
		{"/api/topics/orders/dlq/9/1-1", http.StatusBadRequest},
		{"/api/topics/orders/dlq/x/1-1", http.StatusBadRequest},
		{"/api/topics/orders/dlq/0/not-an-id", http.StatusBadRequest},
		{"/api/topics/orders/messages?limit=0", http.StatusBadRequest},
		{"/api/topics/orders/messages?limit=x", http.StatusBadRequest},
		{"/api/topics/orders/messages?partition=7", http.StatusBadRequest},
		{"/api/topics/orders/groups/g/pending?sort=size", http.StatusBadRequest},
		{"/api/topics/bad%7Bname%7D", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			r := s.get(tt.path)
			assert.Equal(t, tt.status, r.status, "%s", r.body)
			assert.NotEmpty(t, r.errorText(t))
		})
	}
}
