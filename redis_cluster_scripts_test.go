package streamq_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/components/delay"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/dlq"
	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/history"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/lag"
	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/member"
	"github.com/streamq-dev/streamq/internal/outage"
	"github.com/streamq-dev/streamq/internal/outboxstatus"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/retention"
	"github.com/streamq-dev/streamq/internal/retry"
	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// scriptCall is one EVAL or EVALSHA a client sent: the script's SHA1 and its KEYS.
type scriptCall struct {
	sha  string
	keys []string
}

// scriptRecorder is a go-redis hook recording every script call, alone or in a pipeline.
type scriptRecorder struct {
	mu    sync.Mutex
	calls []scriptCall
}

func (r *scriptRecorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *scriptRecorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.record(cmd)
		return next(ctx, cmd)
	}
}

func (r *scriptRecorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			r.record(c)
		}
		return next(ctx, cmds)
	}
}

func (r *scriptRecorder) record(cmd redis.Cmder) {
	args := cmd.Args()
	name := strings.ToLower(cmd.Name())
	if (name != "eval" && name != "evalsha") || len(args) < 3 {
		return
	}
	body, _ := args[1].(string)
	sha := body
	if name == "eval" {
		sum := sha1.Sum([]byte(body))
		sha = hex.EncodeToString(sum[:])
	}
	n, _ := strconv.Atoi(strings.TrimSpace(strings.Trim(strings.TrimSpace(toString(args[2])), `"`)))
	call := scriptCall{sha: sha}
	for i := 3; i < 3+n && i < len(args); i++ {
		call.keys = append(call.keys, toString(args[i]))
	}
	r.mu.Lock()
	r.calls = append(r.calls, call)
	r.mu.Unlock()
}

func (r *scriptRecorder) snapshot() []scriptCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]scriptCall(nil), r.calls...)
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return ""
}

// luaScripts maps the SHA1 of every internal/*/lua/*.lua file to its path.
func luaScripts(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("internal", "*", "lua", "*.lua"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string]string{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		sum := sha1.Sum(src)
		out[hex.EncodeToString(sum[:])] = f
	}
	return out
}

// flushScripts empties the script cache of every master (what a promoted replica or a
// restarted node without the scripts looks like).
func flushScripts(t testing.TB, client redis.UniversalClient) {
	t.Helper()
	forEachMaster(t, client, func(ctx context.Context, node *redis.Client) error {
		return node.ScriptFlush(ctx).Err()
	})
}

// scriptRound calls every script wrapper of internal/ once on partition p of topic, and every
// Publish path (plain, offloaded payload, delayed), asserting each succeeds.
func scriptRound(t *testing.T, client redis.UniversalClient, topic string, p int) {
	t.Helper()
	ctx := context.Background()
	space := keys.New("", "")
	const group = "g"
	str, dlqStr := space.PartitionStream(topic, p), space.DLQ(topic, p)
	reg := partition.NewRegistry(client, space)
	n, err := reg.Register(ctx, topic, 4)
	require.NoError(t, err, "register.lua")
	require.NoError(t, reg.DeclareGroup(ctx, topic, "declared", "0-0"), "declare.lua")
	_, err = reg.Grow(ctx, topic, n+1)
	require.NoError(t, err, "register.lua (grow)")
	_, err = reg.NoteRefused(ctx, topic)
	require.NoError(t, err, "refused.lua")

	leases := lease.New(client, "m", watermill.NewShortUUID(), time.Minute)
	token := leases.NextToken()
	leaseKey := space.Lease(topic, p, group)
	ok, err := leases.Acquire(ctx, leaseKey, token)
	require.NoError(t, err, "acquire.lua")
	require.True(t, ok)
	ok, err = leases.Renew(ctx, leaseKey, token)
	require.NoError(t, err, "renew.lua")
	require.True(t, ok)
	members := member.NewMembership(client, space.Members(topic, group), space.MemberCaps(topic, group), member.Member{Name: "m"}, time.Minute)
	live, err := members.Heartbeat(ctx)
	require.NoError(t, err, "heartbeat.lua")
	require.Len(t, live, 1)
	staticScriptRound(t, client, topic, p)

	require.NoError(t, stream.CreateGroups(ctx, client, []string{str, dlqStr}, group, "0-0"))
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4})
	forced := func(m *message.Message) *message.Message {
		m.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(p))
		return m
	}
	big := forced(message.NewMessage(watermill.NewUUID(), randomPayload(t, bigPayloadSize)))
	later := forced(message.NewMessage(watermill.NewUUID(), []byte("later")))
	delay.Message(later, delay.For(time.Hour))
	plain := forced(message.NewMessage(watermill.NewUUID(), []byte("plain")))
	require.NoError(t, pub.Publish(topic, big, later, plain), "publish: appendseq.lua and park.lua in one pipeline")
	plainPub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, Idempotency: streamq.IdempotencyConfig{Window: -1}})
	require.NoError(t, plainPub.Publish(topic, forced(message.NewMessage(watermill.NewUUID(), randomPayload(t, bigPayloadSize))),
		forced(message.NewMessage(watermill.NewUUID(), []byte("plain")))), "publish: XADD and offload.lua in one pipeline")
	uuidPub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, Idempotency: streamq.IdempotencyConfig{ByUUID: true}})
	require.NoError(t, uuidPub.Publish(topic, forced(message.NewMessage(watermill.NewUUID(), randomPayload(t, bigPayloadSize))),
		forced(message.NewMessage(watermill.NewUUID(), []byte("by uuid")))), "publish by UUID: append.lua")

	_, read, _, err := stream.Read(ctx, client, stream.ReadArgs{Group: group, Consumer: "m", Streams: []string{str}, After: []string{"0-0"}, Count: 10, Block: -1})
	require.NoError(t, err)
	require.Len(t, read, 1)
	entries := read[0].Entries
	require.GreaterOrEqual(t, len(entries), 2)
	_, _, err = stream.Claim(ctx, client, stream.Consumer{Stream: str, Group: group, Name: "m"}, 0, "0-0", 10)
	require.NoError(t, err)
	_, err = stream.DeliveryCounts(ctx, client, stream.Consumer{Stream: str, Group: group}, entries[0].ID, entries[len(entries)-1].ID, 10)
	require.NoError(t, err)

	held := fence.Fence{Key: leaseKey, Token: token}
	fields, err := retry.Flatten(entries[len(entries)-1].Values)
	require.NoError(t, err)
	retryID, _, err := retry.Requeue(ctx, client, fence.Entry{Fence: held, Stream: str, Group: group, ID: entries[len(entries)-1].ID}, fields)
	require.NoError(t, err, "requeue.lua")
	before, err := client.XRevRangeN(ctx, str, "("+retryID, "-", 1).Result()
	require.NoError(t, err)
	behindGroup := "behind-" + watermill.NewShortUUID()
	require.NoError(t, client.XGroupCreate(ctx, str, behindGroup, before[0].ID).Err())
	own, err := client.XAdd(ctx, &redis.XAddArgs{Stream: str, Values: []string{"f", "v"}}).Result()
	require.NoError(t, err)
	behind, err := lag.Read(ctx, client, space, topic, p+1, behindGroup)
	require.NoError(t, err, "oldest.lua: the next entry is another group's retry")
	assert.Equal(t, lag.Group{Name: behindGroup, LastDelivered: before[0].ID, Lag: 1, Exact: true, Skipped: 1, Oldest: own},
		behind.Partitions[p].Groups[0])
	item, err := retry.NewItem(retry.Origin{Topic: topic, Partition: p, RetryCount: 1, MaxRetries: 5, OriginalID: entries[0].ID, Group: group}, entries[len(entries)-1].Values)
	require.NoError(t, err)
	set := retry.Set{ZSet: space.Retry(topic, p, group), Items: space.RetryItems(topic, p, group), Stream: str, Partition: p, Group: group}
	_, err = retry.Schedule(ctx, client, fence.Entry{Fence: held, Stream: str, Group: group, ID: entries[len(entries)-1].ID},
		retry.Parked{ZSet: set.ZSet, Items: set.Items, ItemID: "item-" + watermill.NewShortUUID(), Due: time.Now().Add(-time.Second), Item: item})
	require.NoError(t, err, "schedule.lua")
	moved, err := retry.Move(ctx, client, held, set, 10)
	require.NoError(t, err, "move.lua")
	assert.Equal(t, 1, moved.Moved)
	require.NoError(t, retry.Forget(ctx, client, set, "nothing"))

	var bigEntry stream.Entry
	var others []stream.Entry
	for _, e := range entries {
		if payload.Ref(e.Values) != "" && bigEntry.ID == "" {
			bigEntry = e
		} else {
			others = append(others, e)
		}
	}
	ref := payload.Ref(bigEntry.Values)
	require.NotEmpty(t, ref, "the offloaded entry was read")
	_, err = payload.Get(ctx, client, space.Payload(topic, p, ref))
	require.NoError(t, err)
	rec := dlq.Record{OriginalTopic: topic, Partition: p, OriginalMessageID: bigEntry.ID, OriginalStreamID: bigEntry.ID,
		Reason: "test", Group: group, Headers: "{}", FailedAt: time.Now(), Message: map[string]any{streamq.UUIDField: "dead", streamq.PayloadField: "a payload of 28 bytes, large"}}
	dlqID, _, err := dlq.Add(ctx, client, fence.Entry{Fence: fence.Fence{Key: leaseKey, Token: token}, Stream: str, Group: group, ID: bigEntry.ID}, dlqStr, rec)
	require.NoError(t, err, "deadletter.lua")
	dead, err := client.XRange(ctx, dlqStr, dlqID, dlqID).Result()
	require.NoError(t, err)
	require.Len(t, dead, 1)
	inline, err := dlq.Rebuild(dead[0].Values, dlqID, false, dlq.Offloading{})
	require.NoError(t, err)
	_, err = dlq.Replay(ctx, client, dlq.ReplayArgs{DLQStream: dlqStr, Stream: str, ID: dlqID, Entry: inline})
	require.NoError(t, err, "replay.lua")
	offloaded, err := dlq.Rebuild(dead[0].Values, dlqID, false, dlq.Offloading{Threshold: 4, Index: space.PayloadIndex(topic, p),
		Key: func(ref string) string { return space.Payload(topic, p, ref) }})
	require.NoError(t, err)
	require.NotNil(t, offloaded.Stored)
	dlqLease := space.DLQLease(topic, p, group)
	dlqToken := leases.NextToken()
	ok, err = leases.Acquire(ctx, dlqLease, dlqToken)
	require.NoError(t, err)
	require.True(t, ok)
	_, _, _, err = stream.Read(ctx, client, stream.ReadArgs{Group: group, Consumer: "m", Streams: []string{dlqStr}, After: []string{"0-0"}, Count: 10, Block: -1})
	require.NoError(t, err)
	_, err = dlq.Replay(ctx, client, dlq.ReplayArgs{DLQStream: dlqStr, Stream: str, ID: dlqID, Delete: true,
		Fence: &fence.Fence{Key: dlqLease, Token: dlqToken}, Group: group, Entry: offloaded})
	require.NoError(t, err, "replay.lua (fenced, from a DLQ consumer, payload offloaded)")
	stored, err := payload.Get(ctx, client, offloaded.Stored.Key)
	require.NoError(t, err)
	assert.Equal(t, "a payload of 28 bytes, large", stored)
	dropID, _, err := dlq.Add(ctx, client, fence.Entry{Fence: fence.Fence{Key: leaseKey, Token: token}, Stream: str, Group: group, ID: bigEntry.ID}, dlqStr, rec)
	require.NoError(t, err)
	_, _, _, err = stream.Read(ctx, client, stream.ReadArgs{Group: group, Consumer: "m", Streams: []string{dlqStr}, After: []string{">"}, Count: 10, Block: -1})
	require.NoError(t, err)
	dropped, err := dlq.Drop(ctx, client, fence.Entry{Fence: fence.Fence{Key: dlqLease, Token: dlqToken}, Stream: dlqStr, Group: group, ID: dropID})
	require.NoError(t, err, "drop.lua")
	require.True(t, dropped)

	ackKeys := stream.AckKeys{Lease: leaseKey, Stream: str, Commit: space.Commit(topic, p), PayloadIndex: space.PayloadIndex(topic, p)}
	var acks []stream.Acked
	for _, e := range others {
		acks = append(acks, stream.Acked{ID: e.ID, AckSet: space.Acks(topic, p, e.ID)})
	}
	require.NoError(t, stream.Ack(ctx, client, stream.AckBatch{Keys: ackKeys, Token: token, Group: group, Policy: string(streamq.AckDeleteAllGroups), AckSetTTL: time.Minute, Frontier: stream.Highest(acks), Entries: acks}), "ack.lua")
	ref2 := payload.Ref(bigEntry.Values)
	require.NoError(t, stream.Ack(ctx, client, stream.AckBatch{Keys: ackKeys, Token: token, Group: group, Policy: string(streamq.AckDeleteImmediate),
		AckSetTTL: time.Minute, Frontier: bigEntry.ID,
		Entries: []stream.Acked{{ID: bigEntry.ID, Ref: ref2, AckSet: space.Acks(topic, p, bigEntry.ID), PayloadKey: space.Payload(topic, p, ref2)}}}),
		"ack.lua (offloaded payload)")

	_, err = retention.Trim(ctx, client, str, space.TrimLoss(topic, p), retention.Rule{Before: time.Now().Add(-time.Hour), Exact: true})
	require.NoError(t, err)
	_, err = retention.Trim(ctx, client, str, space.TrimLoss(topic, p), retention.Rule{MaxLen: 1, Hard: true})
	require.NoError(t, err, "trim.lua (hard)")
	_, err = retention.MarkSeen(ctx, client, str, group, time.Now())
	require.NoError(t, err, "seen.lua")
	_, err = retention.TakeLosses(ctx, client, space.TrimLoss(topic, p), group)
	require.NoError(t, err, "takeloss.lua")
	_, err = retention.Trim(ctx, client, str, space.TrimLoss(topic, p), retention.Rule{MaxLen: 1, GroupExpiry: time.Millisecond, Now: time.Now().Add(time.Hour)})
	require.NoError(t, err, "trim.lua (a group expired)")
	_, _, err = stream.Regroup(ctx, client, stream.Lost{Stream: str, Commit: space.Commit(topic, p), Group: "regrouped", StartID: "0-0"})
	require.NoError(t, err, "regroup.lua")
	_, err = stream.PruneConsumers(ctx, client, str, group, 0, []string{"member"})
	require.NoError(t, err, "prune.lua")
	_, err = member.Live(ctx, client, []string{space.Members(topic, group), space.DLQMembers(topic, group)})
	require.NoError(t, err, "live.lua")
	_, err = retention.TrimLen(ctx, client, dlqStr, 100)
	require.NoError(t, err)
	_, _, err = retention.SweepOrphans(ctx, client, retention.Sweep{Stream: str, Index: space.PayloadIndex(topic, p),
		Key: func(ref string) string { return space.Payload(topic, p, ref) }, OlderThan: time.Now(), Limit: 100})
	require.NoError(t, err)

	require.NoError(t, outage.Write(ctx, client, space.Outage(topic, p, group), outage.Record{Member: "m"}, time.Minute), "write.lua")
	var probe *redis.Cmd
	_, _ = client.Pipelined(ctx, func(pp redis.Pipeliner) error {
		probe = outage.QueueWritable(ctx, pp, space.Outage(topic, p, group))
		return nil
	})
	require.NoError(t, outage.Writable(probe), "writable.lua")

	_, err = outboxstatus.Write(ctx, client, "", topic+"_outbox", outboxstatus.Report{Relay: outboxstatus.Relay{ID: "r"},
		Table: topic + "_outbox", Interval: time.Second, Measured: true, Pending: 1})
	require.NoError(t, err, "report.lua")
	_, err = history.Record(ctx, client, space.History(topic), history.Sample{Time: time.Now()}, history.Bounds{Retain: time.Hour})
	require.NoError(t, err, "record.lua")
	_, _, err = stream.CountBetween(ctx, client, str, "-", "+", 10)
	require.NoError(t, err, "between.lua")

	require.NoError(t, members.Leave(ctx), "leave.lua")
	for _, k := range []string{leaseKey, dlqLease} {
		tok := token
		if k == dlqLease {
			tok = dlqToken
		}
		ok, err = leases.Release(ctx, k, tok)
		require.NoError(t, err, "release.lua")
		require.True(t, ok)
	}
}

// staticScriptRound calls the scripts of a static member once: claiming its name, renewing
// its presence, its heartbeat and leave with the instances hash, recording its Close, and
// taking over a lease of an earlier process of it on partition p.
func staticScriptRound(t *testing.T, client redis.UniversalClient, topic string, p int) {
	t.Helper()
	ctx := context.Background()
	space := keys.New("", "")
	const group = "static"
	inst := member.NewInstance(client, space.MemberInstances(topic, group), "s", watermill.NewShortUUID(), time.Minute, time.Minute)
	c, err := inst.Claim(ctx)
	require.NoError(t, err, "claim.lua")
	require.True(t, c.Taken)
	renewed, err := inst.Refresh(ctx)
	require.NoError(t, err, "refresh.lua")
	require.True(t, renewed)
	members := member.NewMembership(client, space.Members(topic, group), space.MemberCaps(topic, group), member.Member{Name: "s"}, time.Minute).Static(inst)
	_, err = members.Heartbeat(ctx)
	require.NoError(t, err, "heartbeat.lua (static)")
	key := space.Lease(topic, p, group)
	earlier := lease.New(client, "s", watermill.NewShortUUID(), time.Minute)
	ok, err := earlier.Acquire(ctx, key, earlier.NextToken())
	require.NoError(t, err)
	require.True(t, ok)
	leases := lease.New(client, "s", inst.ID(), time.Minute)
	token := leases.NextToken()
	_, took, err := leases.Reclaim(ctx, key, token)
	require.NoError(t, err, "reclaim.lua")
	require.True(t, took)
	mine, err := inst.Closing(ctx, time.Minute)
	require.NoError(t, err, "closing.lua")
	require.True(t, mine)
	ok, err = leases.Release(ctx, key, token)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, members.Leave(ctx), "leave.lua (static)")
}

// TestClusterScriptsStayInOneSlot runs every Lua script of internal/ through its Go wrapper
// (and the Publisher's pipelined scripts) on a 3-master cluster: a call whose keys span slots
// would fail with CROSSSLOT, and one touching an undeclared key of another slot would fail
// too. It also checks, call by call, that all KEYS of one call share one slot, and that every
// .lua file was called. Then it empties the script cache of every master (as a failover to a
// replica without the scripts, or a restart, would) and runs everything again: the wrappers
// fall back to EVAL, the Publisher loads its scripts again.
func TestClusterScriptsStayInOneSlot(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3, 0)
	client := c.Client(t)
	calls := &scriptRecorder{}
	client.AddHook(calls)
	const topic = "scripts"
	space := keys.New("", "")
	topicSlot := streamqtest.SlotOf(t, client, space.Meta(topic))
	p := 0
	for streamqtest.SlotOf(t, client, space.PartitionStream(topic, p)) == topicSlot {
		p++
	}

	scriptRound(t, client, topic, p)
	flushScripts(t, client)
	scriptRound(t, client, topic, p)

	scripts := luaScripts(t)
	used := map[string]int{}
	for _, call := range calls.snapshot() {
		name, ok := scripts[call.sha]
		require.True(t, ok, "a script call with unknown SHA1 %s", call.sha)
		used[name]++
		require.NotEmpty(t, call.keys, "%s called without KEYS", name)
		slot := streamqtest.SlotOf(t, client, call.keys[0])
		for _, k := range call.keys[1:] {
			assert.Equal(t, slot, streamqtest.SlotOf(t, client, k), "%s: keys %v span slots", name, call.keys)
		}
	}
	for _, name := range scripts {
		assert.Positive(t, used[name], "%s was never called", name)
	}
	t.Logf("script calls on the cluster: %v", used)
}
