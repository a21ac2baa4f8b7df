package main

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/retention"
)

// heldSeed is one topic of TestCLIBackPressure: one partition of 10 entries, maxLen in the
// topic's metadata, and groups "fast" and "slow" positioned by seed.
type heldSeed struct {
	topic, maxLen string
	seed          func(e *cliEnv, stream string)
}

// fastAckedSixSlowNothing: "fast" read and acked 6 entries, "slow" read nothing.
func fastAckedSixSlowNothing(e *cliEnv, stream string) {
	e.group(stream, "fast", "slow")
	e.readAck(stream, "fast", 6)
}

func (e *cliEnv) seedHeld(s heldSeed) string {
	e.t.Helper()
	require.NoError(e.t, e.adm.CreateTopic(e.ctx, s.topic, 1))
	space := keys.New("", "")
	require.NoError(e.t, e.client.HSet(e.ctx, space.Meta(s.topic), partition.FieldMaxLen, s.maxLen).Err())
	stream := space.PartitionStream(s.topic, 0)
	for i := range 10 {
		require.NoError(e.t, e.client.XAdd(e.ctx, &redis.XAddArgs{Stream: stream, Values: []string{"n", strconv.Itoa(i)}}).Err())
	}
	s.seed(e, stream)
	return stream
}

func (e *cliEnv) group(stream string, names ...string) {
	for _, g := range names {
		require.NoError(e.t, e.client.XGroupCreate(e.ctx, stream, g, "0-0").Err())
	}
}

// readAck delivers n entries of stream to group and acks them.
func (e *cliEnv) readAck(stream, group string, n int64) {
	res, err := e.client.XReadGroup(e.ctx, &redis.XReadGroupArgs{
		Group: group, Consumer: group + "-c", Streams: []string{stream, ">"}, Count: n, Block: -1,
	}).Result()
	require.NoError(e.t, err)
	for _, m := range res[0].Messages {
		require.NoError(e.t, e.client.XAck(e.ctx, stream, group, m.ID).Err())
	}
}

// TestCLIBackPressure: info shows the topic's length retention and, per partition, the
// entries over max length and the group holding them, as a table and as JSON.
func TestCLIBackPressure(t *testing.T) {
	e := newCLIEnv(t)
	cases := []struct {
		heldSeed
		over   int64
		holder string // "" none
	}{
		{heldSeed{"held", "4", fastAckedSixSlowNothing}, 6, "slow"},
		{heldSeed{"bare", "4", func(*cliEnv, string) {}}, 6, ""},
		{heldSeed{"caught", "4", func(e *cliEnv, stream string) {
			e.group(stream, "fast", "slow")
			e.readAck(stream, "fast", 10)
			e.readAck(stream, "slow", 10)
		}}, 6, ""},
		{heldSeed{"unbounded", "-1", fastAckedSixSlowNothing}, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.topic, func(t *testing.T) {
			e := e.with(t)
			e.seedHeld(c.heldSeed)
			maxLen, _ := strconv.ParseInt(c.maxLen, 10, 64)

			var got infoView
			raw := e.jsonOf(&got, "info", c.topic)
			var obj struct{ PerPartition []json.RawMessage }
			require.NoError(t, json.Unmarshal(raw, &obj))
			requireKeys(t, obj.PerPartition[0], "overMaxLen", "holder", "holderNeeds")
			assert.Equal(t, retentionView{MaxLen: maxLen, Policy: "acked", Recorded: true}, got.Retention)
			assert.Equal(t, c.over, got.OverMaxLen)
			p := got.PerPartition[0]
			assert.Equal(t, c.over, p.OverMaxLen)
			assert.Equal(t, c.holder, p.Holder)
			if c.holder != "" {
				assert.Equal(t, p.FirstID, p.HolderNeeds, "slow read nothing: it needs the first entry")
			}

			out := e.ok("info", c.topic)
			assert.Regexp(t, `(?m)^max length\s+`+map[string]string{"4": "4", "-1": "off"}[c.maxLen]+`$`, out)
			assert.Regexp(t, `(?m)^trim\s+approximate$`, out)
			assert.Regexp(t, `(?m)^trim policy\s+acked$`, out)
			assert.Regexp(t, `(?m)^over max length\s+`+strconv.FormatInt(c.over, 10)+`$`, out)
			assert.Regexp(t, `(?m)^PARTITION\s+LENGTH\s+FIRST ID\s+LAST ID\s+DLQ\s+OVER\s+HELD BY$`, out)
			holder := c.holder
			if holder == "" {
				holder = "-"
			}
			assert.Regexp(t, `(?m)^0\s+10\s+\S+\s+\S+\s+0\s+`+strconv.FormatInt(c.over, 10)+`\s+`+holder+`$`, out)
			wide := e.ok("info", c.topic, "-o", "wide")
			assert.Regexp(t, `(?m)^PARTITION\s+LENGTH\s+RETRIES\s+FIRST ID\s+LAST ID\s+GROUPS\s+DLQ\s+OVER MAXLEN\s+HELD BY$`, wide)
			assert.Regexp(t, `(?m)^0\s+10\s+0\s+\S+\s+\S+\s+\d\s+0\s+`+strconv.FormatInt(c.over, 10)+`\s+`+holder+`$`, wide)
		})
	}
}

// TestCLIStatsTrimLost: stats shows what hard trimming removed before the group acked it
// (a TRIM LOST column, only then), as a table and as JSON.
func TestCLIStatsTrimLost(t *testing.T) {
	e := newCLIEnv(t)
	stream := e.seedHeld(heldSeed{"held", "4", fastAckedSixSlowNothing})
	out := e.ok("stats", "held", "slow", "-o", "wide")
	assert.NotContains(t, out, "TRIM LOST", "nothing lost: no column")
	var got statsView
	e.jsonOf(&got, "stats", "held", "slow")
	assert.Zero(t, got.TrimLost)

	// The hard trim a lease holder runs under TrimHard: 6 entries slow had not read go.
	trimmed, err := retention.Trim(e.ctx, e.client, stream, keys.New("", "").TrimLoss("held", 0),
		retention.Rule{MaxLen: 4, Exact: true, Hard: true})
	require.NoError(t, err)
	require.Equal(t, int64(6), trimmed.Unacked)

	e.jsonOf(&got, "stats", "held", "slow")
	assert.Equal(t, int64(6), got.TrimLost)
	require.Len(t, got.Partitions, 1)
	assert.Equal(t, int64(6), got.Partitions[0].TrimLost)
	out = e.ok("stats", "held", "slow", "-o", "wide")
	assert.Regexp(t, `(?m)^PARTITION\s+PENDING.*FRONTIER\s+TRIM LOST$`, out)
	assert.Regexp(t, `(?m)^0\s+.*\s+6$`, out)
	assert.Regexp(t, `(?m)^TOTAL\s+.*\s+6$`, out)
	e.jsonOf(&got, "stats", "held", "fast")
	assert.Zero(t, got.TrimLost, "fast acked what went")

	var info infoView
	e.jsonOf(&info, "info", "held")
	assert.Zero(t, info.OverMaxLen, "trimmed to max length")
	assert.Empty(t, info.PerPartition[0].Holder)
}
