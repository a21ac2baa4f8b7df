package e2e

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// chromiumPath is Debian's chromium package.
const chromiumPath = "/usr/bin/chromium"

// stepTimeout bounds one browser step.
const stepTimeout = 30 * time.Second

// The window the pages are tested (and the screenshots taken) at: a common laptop's.
const (
	windowWidth  = 1366
	windowHeight = 768
)

// browser is one headless Chromium tab, used by one test (or subtest) at a time.
type browser struct {
	t       *testing.T
	ctx     context.Context
	console *problems
}

// problems are the uncaught exceptions and Content-Security-Policy violations the page's
// console reported.
type problems struct {
	mu   sync.Mutex
	seen []string
}

// with returns the browser for subtest t.
func (b *browser) with(t *testing.T) *browser {
	return &browser{t: t, ctx: b.ctx, console: b.console}
}

// startBrowser starts headless Chromium with a fresh profile, or skips (fails with
// STREAMQ_REQUIRE_BROWSER=1) when it is not installed. It is closed at cleanup.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("STREAMQ_REQUIRE_BROWSER") == "1" {
			t.Fatalf("%s not found and STREAMQ_REQUIRE_BROWSER=1: install it (apt-get install chromium)", chromiumPath)
		}
		t.Skipf("%s not found: install Debian's chromium package (apt-get install chromium) to run the browser test, "+
			"or set STREAMQ_REQUIRE_BROWSER=1 to make this a failure", chromiumPath)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(windowWidth, windowHeight),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	b := &browser{t: t, ctx: ctx, console: &problems{}}
	var watched <-chan struct{}
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		if watched != nil {
			<-watched
		}
	})
	// The first action starts the browser; its context must be the tab's own, not one with a
	// timeout (the browser would end with it).
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(windowWidth, windowHeight)))
	watched = b.watchConsole()
	return b
}

// watchConsole records uncaught exceptions and CSP violations until the tab closes; the
// returned channel is closed then.
func (b *browser) watchConsole() <-chan struct{} {
	messages := chromedp.Console(b.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || strings.Contains(m.Text, "Content Security Policy") {
				b.console.mu.Lock()
				b.console.seen = append(b.console.seen, m.String())
				b.console.mu.Unlock()
			}
		}
	}()
	return done
}

// requireNoProblems fails when the page threw or broke its Content-Security-Policy.
func (b *browser) requireNoProblems() {
	b.t.Helper()
	b.console.mu.Lock()
	defer b.console.mu.Unlock()
	require.Empty(b.t, b.console.seen, "the page reported errors")
}

// do runs steps within stepTimeout.
func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	require.NoError(b.t, chromedp.Do(ctx, steps...))
}

// run runs one action within stepTimeout and returns its value.
func run[T any](b *browser, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	require.NoError(b.t, err)
	return v
}

// eval evaluates a JavaScript expression (promises are awaited) and decodes its value.
func eval[T any](b *browser, expression string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expression, chromedp.EvalAwaitPromise))
	require.NoError(b.t, err, "evaluate %s", expression)
	return v
}

// waitFor waits (in the page, polling every 50 ms) until expression is truthy.
func (b *browser) waitFor(expression, what string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](expression,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(stepTimeout)))
	require.NoError(b.t, err, "waiting for %s", what)
}

// open loads url afresh (through about:blank, so a change of the #route alone reloads too)
// and waits for the page to have loaded its data once.
func (b *browser) open(url string) {
	b.t.Helper()
	b.do(chromedp.Navigate("about:blank"), chromedp.Navigate(url))
	b.waitFor(`document.getElementById('updated').textContent.startsWith('Updated')`, "the first refresh of "+url)
}

// click clicks the element css selects (a real mouse click, once it is visible).
func (b *browser) click(css string) {
	b.t.Helper()
	b.do(chromedp.Click(chromedp.CSS(css), chromedp.NodeVisible))
}
