package main

import (
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
)

// TestCLIPayloadsSweep: payloads sweep deletes an old orphaned payload, keeps one whose entry
// exists, and reports the count; an unknown topic exits 3.
func TestCLIPayloadsSweep(t *testing.T) {
	e := newCLIEnv(t)
	const topic = "big"
	require.NoError(t, e.adm.CreateTopic(e.ctx, topic, 1))
	space := keys.New("", "")
	id, err := e.client.XAdd(e.ctx, &redis.XAddArgs{Stream: space.PartitionStream(topic, 0), ID: "1000-1", Values: []string{"n", "1"}}).Result()
	require.NoError(t, err)
	for _, member := range []struct{ id, ref string }{{id, "live"}, {"1000-2", "gone"}} {
		require.NoError(t, e.client.Set(e.ctx, space.Payload(topic, 0, member.ref), "bytes", 0).Err())
		require.NoError(t, e.client.ZAdd(e.ctx, space.PayloadIndex(topic, 0), redis.Z{Score: 1000, Member: member.id + "|" + member.ref}).Err())
	}

	var got sweepView
	e.jsonOf(&got, "payloads", "sweep", topic, "--json")
	assert.Equal(t, sweepView{Topic: topic, Deleted: 1}, got)
	assert.Equal(t, int64(1), e.client.Exists(e.ctx, space.Payload(topic, 0, "live")).Val(), "the payload of an entry is kept")
	assert.Zero(t, e.client.Exists(e.ctx, space.Payload(topic, 0, "gone")).Val())
	assert.Contains(t, e.ok("payloads", "sweep", topic), `deleted 0 orphaned payloads of topic "big"`)

	r := e.run("payloads", "sweep", "nope")
	assert.Equal(t, exitNotFound, r.code)
}
