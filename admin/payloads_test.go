package admin_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
)

// TestSweepOrphanedPayloads: the on-demand sweep deletes, on every partition and over more
// than one page of the index, the offloaded payloads whose entry is gone; it keeps a payload
// whose entry exists and one indexed less than a minute ago.
func TestSweepOrphanedPayloads(t *testing.T) {
	e := newOpEnv(t)
	const topic = "big"
	e.create(topic, 2)
	recent := time.Now().UnixMilli()
	type payloadSeed struct {
		p         int
		id, ref   string
		score     int64
		withEntry bool
		wantKept  bool
	}
	seeds := []payloadSeed{
		{p: 0, id: "1000-1", ref: "live0", score: 1000, withEntry: true, wantKept: true},
		{p: 1, id: "1000-1", ref: "live1", score: 1000, withEntry: true, wantKept: true},
		{p: 0, id: "1000-2", ref: "gone0", score: 1000},
		{p: 1, id: "1000-2", ref: "gone1", score: 1000},
		{p: 1, id: strconv.FormatInt(recent, 10) + "-0", ref: "recent1", score: recent, wantKept: true},
	}
	for i := range 600 { // more than one page of partition 0's index
		seeds = append(seeds, payloadSeed{p: 0, id: strconv.Itoa(2000+i) + "-0", ref: "old" + strconv.Itoa(i), score: int64(2000 + i)})
	}
	wantDeleted := int64(0)
	for _, s := range seeds {
		if s.withEntry {
			require.Equal(t, s.id, e.xadd(topic, s.p, s.id, s.ref))
		}
		require.NoError(t, e.client.Set(e.ctx, e.space.Payload(topic, s.p, s.ref), "bytes of "+s.ref, 0).Err())
		require.NoError(t, e.client.ZAdd(e.ctx, e.space.PayloadIndex(topic, s.p), redis.Z{Score: float64(s.score), Member: s.id + "|" + s.ref}).Err())
		if !s.wantKept {
			wantDeleted++
		}
	}

	n, err := e.adm.SweepOrphanedPayloads(e.ctx, topic)
	require.NoError(t, err)
	assert.Equal(t, wantDeleted, n)
	for _, s := range seeds {
		exists, err := e.client.Exists(e.ctx, e.space.Payload(topic, s.p, s.ref)).Result()
		require.NoError(t, err)
		assert.Equal(t, s.wantKept, exists == 1, "payload %s of partition %d", s.ref, s.p)
		_, err = e.client.ZScore(e.ctx, e.space.PayloadIndex(topic, s.p), s.id+"|"+s.ref).Result()
		assert.Equal(t, s.wantKept, err == nil, "index member of %s", s.ref)
	}

	n, err = e.adm.SweepOrphanedPayloads(e.ctx, topic)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing left to sweep")
	_, err = e.adm.SweepOrphanedPayloads(e.ctx, "nope")
	assert.ErrorIs(t, err, admin.ErrTopicNotFound)
}
