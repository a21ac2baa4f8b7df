package payload

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// space names the keys the way a Publisher with the default prefixes does.
var space = keys.New("", "")

// offloadOf is the offloaded append of body under ref to partition p of topic "t", kept ttl
// (0: for ever), its entry carrying the reference fields and a uuid.
func offloadOf(p int, ref string, body []byte, ttl time.Duration) Offload {
	return Offload{
		Stored: Stored{Key: space.Payload("t", p, ref), Index: space.PayloadIndex("t", p), Ref: ref,
			Payload: body, TTL: ttl},
		Stream: space.PartitionStream("t", p),
		Fields: append(RefFields(ref, len(body)), "uuid", "u-"+ref),
	}
}

// run sends the offloaded appends as one pipeline, as the Publisher does, and returns
// their commands.
func run(t *testing.T, rdb redis.UniversalClient, offloads ...Offload) []*redis.Cmd {
	t.Helper()
	cmds := make([]*redis.Cmd, len(offloads))
	_, _ = rdb.Pipelined(context.Background(), func(pipe redis.Pipeliner) error {
		for i, o := range offloads {
			cmds[i] = Cmd(context.Background(), pipe, o)
		}
		return nil
	})
	return cmds
}

// entryMs is the milliseconds part of stream id.
func entryMs(t *testing.T, id string) float64 {
	t.Helper()
	ms, _, ok := strings.Cut(id, "-")
	require.True(t, ok, id)
	f, err := strconv.ParseFloat(ms, 64)
	require.NoError(t, err)
	return f
}

// TestOffloadStoresPayloadAndEntry: an offloaded append stores the bytes (binary, over the
// threshold) in the payload key with the payload TTL, appends the entry with its fields, and
// indexes the payload as "id|ref" scored by the entry's ms; the entry's reference leads a
// reader back to the bytes.
func TestOffloadStoresPayloadAndEntry(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	body := bytes.Repeat([]byte{0, 0xff, 'a', '\n'}, DefaultThreshold/4+1)
	require.True(t, Offloads(DefaultThreshold, len(body)))
	o := offloadOf(0, "ref-1", body, 10*time.Minute)
	cmds := run(t, client, o)
	id, err := cmds[0].Text()
	require.NoError(t, err)

	msgs, err := client.XRange(ctx, o.Stream, "-", "+").Result()
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	assert.Equal(t, id, msgs[0].ID, "the script returns the entry's id")
	assert.Equal(t, map[string]any{FieldRef: "ref-1", FieldStorageType: StorageString,
		FieldOriginalSize: strconv.Itoa(len(body)), "uuid": "u-ref-1"}, msgs[0].Values)

	ref := Ref(msgs[0].Values)
	require.Equal(t, "ref-1", ref)
	got, err := Get(ctx, client, space.Payload("t", 0, ref))
	require.NoError(t, err)
	assert.Equal(t, string(body), got, "the bytes, unchanged")
	ttl, err := client.PTTL(ctx, o.Key).Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, 9*time.Minute)
	assert.LessOrEqual(t, ttl, 10*time.Minute)

	idx, err := client.ZRangeWithScores(ctx, o.Index, 0, -1).Result()
	require.NoError(t, err)
	require.Len(t, idx, 1)
	assert.Equal(t, entryMs(t, id), idx[0].Score)
	member, _ := idx[0].Member.(string)
	gotID, gotRef, ok := IndexMember(member)
	require.True(t, ok, member)
	assert.Equal(t, id, gotID)
	assert.Equal(t, "ref-1", gotRef)
	assert.Equal(t, time.Duration(-1), client.PTTL(ctx, o.Index).Val(), "the index itself does not expire")
}

// TestOffloadWithoutTTL: a payload TTL of 0 stores the payload without expiry; a short TTL
// is set to the millisecond.
func TestOffloadWithoutTTL(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	forever, short := offloadOf(0, "forever", []byte("x"), 0), offloadOf(0, "short", []byte("y"), 1500*time.Millisecond)
	for _, c := range run(t, client, forever, short) {
		require.NoError(t, c.Err())
	}
	assert.Equal(t, time.Duration(-1), client.PTTL(ctx, forever.Key).Val(), "kept until deleted")
	ttl := client.PTTL(ctx, short.Key).Val()
	assert.Greater(t, ttl, time.Second)
	assert.LessOrEqual(t, ttl, 1500*time.Millisecond)
	assert.Equal(t, int64(2), client.XLen(ctx, forever.Stream).Val())
	assert.Equal(t, int64(2), client.ZCard(ctx, forever.Index).Val())
}

// TestOffloadRetryAppendsNothing: the same offloaded append sent again (a client retry after a
// lost reply) finds its payload key and answers 0: no second entry or index member, and the
// first payload and its TTL stay, whatever the retry carries.
func TestOffloadRetryAppendsNothing(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	o := offloadOf(0, "ref", []byte("first"), 10*time.Minute)
	id, err := run(t, client, o)[0].Text()
	require.NoError(t, err)

	retry := o
	retry.Payload, retry.TTL = []byte("second"), time.Second
	again, err := run(t, client, retry)[0].Result()
	require.NoError(t, err)
	assert.Equal(t, int64(0), again, "the call ran before")
	third, err := run(t, client, o)[0].Result()
	require.NoError(t, err)
	assert.Equal(t, int64(0), third)

	msgs, err := client.XRange(ctx, o.Stream, "-", "+").Result()
	require.NoError(t, err)
	require.Len(t, msgs, 1, "one entry")
	assert.Equal(t, id, msgs[0].ID)
	assert.Equal(t, []string{id + "|ref"}, client.ZRange(ctx, o.Index, 0, -1).Val())
	v, err := Get(ctx, client, o.Key)
	require.NoError(t, err)
	assert.Equal(t, "first", v)
	assert.Greater(t, client.PTTL(ctx, o.Key).Val(), 9*time.Minute, "the retry's TTL is not set")
}

// TestOffloadRefusedAppend: an offloaded append whose entry Redis refuses (here the stream
// key holds a string) returns the XADD's error and neither appends nor indexes anything.
func TestOffloadRefusedAppend(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	o := offloadOf(0, "ref", []byte("body"), time.Minute)
	require.NoError(t, client.Set(ctx, o.Stream, "not a stream", 0).Err())
	err := run(t, client, o)[0].Err()
	require.Error(t, err)
	assert.True(t, redis.HasErrorPrefix(err, "WRONGTYPE"), "%v", err)
	assert.Equal(t, "not a stream", client.Get(ctx, o.Stream).Val())
	assert.Zero(t, client.Exists(ctx, o.Index).Val(), "nothing indexed")
}

// TestOffloadRefusedAppendLeavesNoPayload: an offloaded append whose entry Redis refuses must
// leave no payload key behind, and the same call sent again must not answer "ran before".
func TestOffloadRefusedAppendLeavesNoPayload(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	o := offloadOf(0, "ref", []byte("body"), 0)
	require.NoError(t, client.Set(ctx, o.Stream, "not a stream", 0).Err())
	require.Error(t, run(t, client, o)[0].Err())
	assert.Zero(t, client.Exists(ctx, o.Key).Val(), "no orphan payload")

	require.NoError(t, client.Del(ctx, o.Stream).Err())
	id, err := run(t, client, o)[0].Text()
	require.NoError(t, err, "sent again once the stream is fixed, the call appends")
	assert.NotEmpty(t, id)
}

// TestGetMissingPayload: Get of a payload key that is gone is ErrMissing naming the key; any
// other failure (the key holds another type) is returned as the server's error, not
// ErrMissing.
func TestGetMissingPayload(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	key := space.Payload("t", 0, "gone")
	_, err := Get(ctx, client, key)
	require.ErrorIs(t, err, ErrMissing)
	assert.Contains(t, err.Error(), key)

	require.NoError(t, client.RPush(ctx, key, "x").Err())
	_, err = Get(ctx, client, key)
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrMissing)
	assert.True(t, redis.HasErrorPrefix(err, "WRONGTYPE"), "%v", err)
	assert.Contains(t, err.Error(), key)
}

// TestOffloadClusterSlots: on a 3-master cluster offloaded appends to partitions served by
// different masters run (every key the script touches is in its partition's slot), and each
// payload key and index is in its stream's slot.
func TestOffloadClusterSlots(t *testing.T) {
	t.Parallel()
	cluster := redistest.StartCluster(t, 3, 0)
	client := cluster.Client(t)
	ctx := context.Background()
	const parts = 6
	offloads := make([]Offload, parts)
	masters := map[string]bool{}
	for i := range offloads {
		offloads[i] = offloadOf(i, fmt.Sprint("ref-", i), []byte(fmt.Sprint("body-", i)), time.Minute)
		slot, err := client.ClusterKeySlot(ctx, offloads[i].Stream).Result()
		require.NoError(t, err)
		master, err := cluster.MasterOf(int(slot))
		require.NoError(t, err)
		masters[master] = true
	}
	require.Greater(t, len(masters), 1, "the partitions are spread over masters")
	for i, c := range run(t, client, offloads...) {
		id, err := c.Text()
		require.NoError(t, err, "partition %d", i)
		o := offloads[i]
		want := client.ClusterKeySlot(ctx, o.Stream).Val()
		assert.Equal(t, want, client.ClusterKeySlot(ctx, o.Key).Val())
		assert.Equal(t, want, client.ClusterKeySlot(ctx, o.Index).Val())
		v, err := Get(ctx, client, o.Key)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint("body-", i), v)
		assert.Equal(t, []string{id + "|" + o.Ref}, client.ZRange(ctx, o.Index, 0, -1).Val())
		assert.Equal(t, int64(1), client.XLen(ctx, o.Stream).Val())
	}
}
