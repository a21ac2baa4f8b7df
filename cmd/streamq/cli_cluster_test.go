package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// TestCLICluster runs the binary against a three-master Redis Cluster: seed addresses as a
// comma-separated --redis-url or --cluster with one URL, tail with one XREAD per partition,
// delete-topic scanning every master.
func TestCLICluster(t *testing.T) {
	cluster := redistest.StartCluster(t, 3, 0)
	client := cluster.Client(t)
	ctx := context.Background()
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client}, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	require.NoError(t, adm.CreateTopic(ctx, ordersTopic, ordersParts))
	for p := range ordersParts {
		require.NoError(t, pub.Publish(ordersTopic, forced([]byte("m"), p)))
	}

	addrs := cluster.Addrs()
	e := &cliEnv{t: t, ctx: ctx, url: strings.Join(addrs, ","), adm: adm}

	var topics []topicView
	e.jsonOf(&topics, "topics")
	require.Len(t, topics, 1)
	assert.Equal(t, topicView{Topic: ordersTopic, Partitions: ordersParts, Length: ordersParts}, topics[0])

	one := &cliEnv{t: t, ctx: ctx, url: "redis://" + addrs[1], adm: adm}
	var info infoView
	one.jsonOf(&info, "--cluster", "info", ordersTopic)
	assert.Equal(t, int64(ordersParts), info.Length)

	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tp := e.startTail(tctx, ordersTopic, "--count", "2", "--json")
	first, second := forced([]byte("live 0"), 0), forced([]byte("live 1"), 3)
	require.NoError(t, pub.Publish(ordersTopic, first))
	require.NoError(t, pub.Publish(ordersTopic, second))
	require.NoError(t, tp.wait(), "stderr: %s", tp.stderr.String())
	lines := strings.Split(strings.TrimSpace(tp.stdout.String()), "\n")
	require.Len(t, lines, 2, tp.stdout.String())
	got := map[string]int{}
	for _, l := range lines {
		var v entryView
		require.NoError(t, json.Unmarshal([]byte(l), &v), l)
		got[v.UUID] = v.Partition
	}
	assert.Equal(t, map[string]int{first.UUID: 0, second.UUID: 3}, got)

	var deleted deletedTopicView
	e.jsonOf(&deleted, "delete-topic", ordersTopic, "--yes")
	assert.Positive(t, deleted.KeysRemoved)
	_, err = adm.QueueInfo(ctx, ordersTopic)
	require.ErrorIs(t, err, admin.ErrTopicNotFound)
}
