package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/fulltest"
)

// operationsIncident builds the state docs/operations.md describes: a Redis of 40 MiB
// maxmemory, topic "orders" with 4
// partitions and 40 orders of 10 customers, every one handled by group "payments", 2 of each
// partition read and not acked by group "billing" (its member gone), every one failed to the
// DLQ by group "workers".
func (e *cliEnv) operationsIncident() {
	t := e.t
	t.Helper()
	require.NoError(t, e.client.ConfigSet(e.ctx, "maxmemory", "40mb").Err(), "as docs/storage.md recommends")
	require.NoError(t, e.adm.CreateTopic(e.ctx, ordersTopic, ordersParts))
	msgs := make([]*message.Message, 40)
	for i := range msgs {
		msgs[i] = message.NewMessage(watermill.NewUUID(), fmt.Appendf(nil, `{"order":%d}`, i))
		msgs[i].Metadata.Set(streamq.PartitionKeyMetadata, fmt.Sprintf("customer-%d", i%10))
	}
	require.NoError(t, e.pub.Publish(ordersTopic, msgs...))
	e.consume(ordersTopic, payments, ordersParts, len(msgs))
	for p := range ordersParts {
		stream := fmt.Sprintf("stream:topic:{%s:p:%d}", ordersTopic, p)
		require.NoError(t, e.client.XGroupCreate(e.ctx, stream, "billing", "0").Err())
		require.NoError(t, e.client.XReadGroup(e.ctx, &redis.XReadGroupArgs{Group: "billing",
			Consumer: "billing-7f9c2d-member", Streams: []string{stream, ">"}, Count: 2}).Err())
	}
	e.failAll(ordersTopic, ordersParts, int64(len(msgs)))
}

// operationsVariable is what changes from one run to the next in the CLI's tables: stream
// ids, times, durations, generated member names, Redis's used memory, and so the columns'
// widths.
var operationsVariable = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{13}-\d+`), "<id>"},
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?( ?[A-Z]{2,5}|Z)?`), "<time>"},
	{regexp.MustCompile(`\b(\d+(\.\d+)?(h|ms|µs|ns|m|s))+\b`), "<duration>"},
	{regexp.MustCompile(`streamq-[0-9A-Za-z]{8,}`), "<member>"},
	{regexp.MustCompile(`(?m)^(memory:?)[ \t].*$`), "$1 <memory>"},
	{regexp.MustCompile(`\b\d+(\.\d+)? (B|KiB|MiB|GiB)\b`), "<size>"},
	{regexp.MustCompile(`\(\S+ pid \d+\)`), "(<process>)"},
	{regexp.MustCompile(`[ \t]+`), " "},
}

// operationsNormal is s with what changes between runs replaced, its lines sorted: the rows
// of entries published in one millisecond or read at once come in either order.
func operationsNormal(s string) string {
	for _, v := range operationsVariable {
		s = v.re.ReplaceAllString(s, v.with)
	}
	lines := strings.Split(strings.TrimSpace(s), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestOperationsDocOutput runs the commands of docs/operations.md's console blocks on the
// state the page describes (operationsIncident; for the blocks of the runbook, the scene of
// a full Redis, fulltest.MemoryScene filled to maxmemory) and compares their output, what
// changes between runs aside. STREAMQ_UPDATE_DOCS=1 writes this run's output into the page
// instead.
func TestOperationsDocOutput(t *testing.T) {
	t.Parallel()
	const page = "../../docs/operations.md"
	lines, blocks := readDocPage(t, page)
	require.NotEmpty(t, blocks, "docs/operations.md has no console block")
	from, to := section(lines, "## Redis is full: a runbook")
	require.Positive(t, from, "docs/operations.md has no runbook")

	e := newCLIEnv(t)
	e.operationsIncident()
	full := newCLIEnv(t)
	fulltest.MemoryScene(t, full.client, full.pub)
	fulltest.Fill(t, full.client)
	checkDocOutputs(t, page, lines, blocks, operationsNormal, func(i int) *cliEnv {
		if blocks[i].at > from && blocks[i].at < to {
			return full
		}
		return e
	})
}

// section is where the section under heading starts and ends in lines (0, 0 when it is
// missing).
func section(lines []string, heading string) (from, to int) {
	for i, l := range lines {
		switch {
		case l == heading:
			from, to = i, len(lines)
		case from > 0 && i > from && strings.HasPrefix(l, "## "):
			return from, i
		}
	}
	return from, to
}
