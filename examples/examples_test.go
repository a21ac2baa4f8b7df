// Package examples_test builds every example program and runs it against a redis-server of
// its own (a Redis Cluster for the cluster example), as a user would with go run.
package examples_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/redistest"
)

// build compiles ./name into a binary of the test's temporary directory.
func build(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	out, err := exec.Command("go", "build", "-o", bin, "./"+name).CombinedOutput()
	require.NoError(t, err, "go build ./%s: %s", name, out)
	return bin
}

// runExample runs an example to its end with env added and returns its output. The minute
// it is given starts once it is built: a build with a cold cache, beside the other packages'
// builds, can take longer than the run.
func runExample(t *testing.T, name string, env ...string) string {
	t.Helper()
	bin := build(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s: %s", name, out)
	return string(out)
}

// TestQuickstartEmbedded runs the quick start as README's reader does, with no Redis:
// REDIS_URL unset, it starts an embedded one and handles every message it published.
func TestQuickstartEmbedded(t *testing.T) {
	t.Parallel()
	out := runExample(t, "quickstart", "REDIS_URL=")
	assert.Contains(t, out, "using an embedded Redis (miniredis)")
	assert.Contains(t, out, "published 10 orders, handled 10 here")
	assert.Equal(t, 10, strings.Count(out, "order {"), out)
}

func TestQuickstart(t *testing.T) {
	t.Parallel()
	out := runExample(t, "quickstart", "REDIS_URL="+redistest.Start(t).URL())
	assert.Contains(t, out, "published 10 orders, handled 10 here")
	assert.Equal(t, 10, strings.Count(out, "order {"), out)
}

// handledLine is the quick start's line for one order it handled: the order's payload
// (its number and the process that published it).
var handledLine = regexp.MustCompile(`(?m)^order (\{"order":\d+,"from":(\d+)\}) of customer-\d on partition \d+$`)

// summaryLine is the quick start's last line: how many orders it handled itself.
var summaryLine = regexp.MustCompile(`(?m)^published 10 orders, handled (\d+) here; group quickstart-payments has handled every order of quickstart-orders$`)

// TestQuickstartTwoCopies runs two copies of the quick start at once on one redis-server, as
// README says: both exit 0, and together they handled the 20 orders they published, each
// once, each copy's summary counting its own share.
func TestQuickstartTwoCopies(t *testing.T) {
	t.Parallel()
	bin, url := build(t, "quickstart"), redistest.Start(t).URL()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var outs [2]bytes.Buffer
	var cmds [2]*exec.Cmd
	for i := range cmds {
		cmds[i] = exec.CommandContext(ctx, bin)
		cmds[i].Env = append(os.Environ(), "REDIS_URL="+url)
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
		require.NoError(t, cmds[i].Start())
	}
	seen, from := map[string]int{}, map[string]int{} // times each order was handled; orders handled by publisher
	for i, cmd := range cmds {
		require.NoError(t, cmd.Wait(), "copy %d: %s", i, &outs[i])
		out := outs[i].String()
		lines := handledLine.FindAllStringSubmatch(out, -1)
		for _, l := range lines {
			seen[l[1]]++
			from[l[2]]++
		}
		summary := summaryLine.FindStringSubmatch(out)
		require.NotNil(t, summary, "copy %d's summary: %s", i, out)
		assert.Equal(t, strconv.Itoa(len(lines)), summary[1], "copy %d counts the orders it printed: %s", i, out)
		t.Logf("copy %d handled %d orders", i, len(lines))
	}
	assert.Len(t, seen, 20, "orders handled by the two copies together")
	assert.Equal(t, map[string]int{strconv.Itoa(cmds[0].Process.Pid): 10, strconv.Itoa(cmds[1].Process.Pid): 10}, from,
		"orders handled, by the copy that published them")
	for order, n := range seen {
		assert.Equal(t, 1, n, "times %s was handled", order)
	}
}

func TestRetries(t *testing.T) {
	t.Parallel()
	out := runExample(t, "retries", "REDIS_URL="+redistest.Start(t).URL())
	for _, want := range []string{"flaky: failing (retry 0)", "flaky: failing (retry 1)", "flaky: paid after 2 retries",
		"broken: failing (retry 2)", "fine: paid after 0 retries", `"broken", reason "retries exhausted (2): card declined", group retries-payments`} {
		assert.Contains(t, out, want)
	}
}

func TestDLQReplay(t *testing.T) {
	t.Parallel()
	out := runExample(t, "dlqreplay", "REDIS_URL="+redistest.Start(t).URL())
	for _, want := range []string{"payments: order 17 has no currency: dead-lettered",
		"fixers: dead letter from group dlqreplay-payments, partition", ": no currency\n", "payments: order 17 paid in EUR"} {
		assert.Contains(t, out, want)
	}
}

func TestCluster(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3, 0)
	out := runExample(t, "cluster", "REDIS_CLUSTER_ADDRS="+strings.Join(c.Addrs(), ","))
	assert.Contains(t, out, "handled 24 messages from")
}

// TestDashboard starts the dashboard example, reads its page and health check, and stops it
// with SIGTERM: it exits 0.
func TestDashboard(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	var out bytes.Buffer
	cmd := exec.Command(build(t, "dashboard"))
	cmd.Env = append(os.Environ(), "REDIS_URL="+redistest.Start(t).URL(), "ADDR="+addr)
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	require.Eventually(t, func() bool {
		resp, err := http.Get(fmt.Sprintf("http://%s/streamq/", addr))
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond, "the dashboard page: %s", &out)
	resp, err := http.Get(fmt.Sprintf("http://%s/healthz", addr))
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), "%s", &out)
}

// TestPipeline runs the two-stage pipeline whose first stage is killed between publishing
// and acking: with DeriveUUIDs nothing reaches the second stage twice, on the embedded Redis
// and on a redis-server; without it (-derive=false) duplicates do.
func TestPipeline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  string
	}{{"embedded", "REDIS_URL="}, {"server", "REDIS_URL=" + redistest.Start(t).URL()}} {
		t.Run(tc.name, func(t *testing.T) {
			out := runExample(t, "pipeline", tc.env)
			assert.Contains(t, out, "stage 1 was killed after publishing the invoices of order 40 and before acking it")
			assert.Contains(t, out, "100 orders, 200 invoices shipped (200 distinct), 0 duplicates")
		})
	}
	t.Run("control", func(t *testing.T) {
		bin := build(t, "pipeline")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "-derive=false")
		cmd.Env = append(os.Environ(), "REDIS_URL=")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Regexp(t, `100 orders, \d+ invoices shipped \(200 distinct\), [1-9]\d* duplicates`, string(out))
	})
}
