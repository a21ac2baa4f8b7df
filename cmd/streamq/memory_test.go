package main

import (
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
)

// TestCLIMemoryFull: on a Redis that refused a publish for memory, info and stats show the
// server's memory at maxmemory and since when publishing is refused, as text and as JSON.
func TestCLIMemoryFull(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	const topic = "full"
	require.NoError(t, e.adm.CreateTopic(e.ctx, topic, 1))
	require.NoError(t, e.pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("x"))))
	e.group(keys.New("", "").PartitionStream(topic, 0), "g")
	require.NoError(t, e.client.ConfigSet(e.ctx, "maxmemory-policy", "noeviction").Err())
	require.NoError(t, e.client.ConfigSet(e.ctx, "maxmemory", "1").Err())
	t.Cleanup(func() { _ = e.client.ConfigSet(e.ctx, "maxmemory", "0").Err() })
	err := e.pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("x")))
	require.ErrorIs(t, err, streamq.ErrRedisFull)

	info := e.ok("info", topic)
	assert.Regexp(t, `(?m)^memory\s+[\d.]+/[\d.]+ [KMG]?i?B \(\d+ %\), at maxmemory$`, info)
	assert.Regexp(t, `(?m)^full\s+publishing refused since \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \S+ \(\S+ ago\)$`, info)
	stats := e.ok("stats", topic, "g")
	assert.Regexp(t, `(?m)^memory: .*, at maxmemory$`, stats)
	assert.Regexp(t, `(?m)^full: publishing refused since .* ago\)$`, stats)

	var v infoView
	e.jsonOf(&v, "info", topic)
	assert.True(t, v.Memory.Full)
	assert.False(t, time.Time(v.Memory.RefusedSince).IsZero())
	require.Len(t, v.Memory.Servers, 1)
	assert.True(t, v.Memory.Servers[0].Full)
	assert.Equal(t, int64(1), v.Memory.Servers[0].MaxBytes)
}
