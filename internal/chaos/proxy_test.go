package chaos

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// echoServer echoes every line back and records what each connection sent.
type echoServer struct {
	l     net.Listener
	mu    sync.Mutex
	lines []string
	wg    sync.WaitGroup
}

func newEchoServer(t *testing.T) *echoServer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	e := &echoServer{l: l}
	e.wg.Add(1)
	go e.serve()
	t.Cleanup(func() {
		_ = l.Close()
		e.wg.Wait()
	})
	return e
}

func (e *echoServer) serve() {
	defer e.wg.Done()
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		c, err := e.l.Accept()
		if err != nil {
			return
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			e.echo(c)
		}()
	}
}

func (e *echoServer) echo(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		e.mu.Lock()
		e.lines = append(e.lines, line)
		e.mu.Unlock()
		if _, err := io.WriteString(c, line); err != nil {
			return
		}
	}
}

func (e *echoServer) received() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.lines...)
}

func startProxy(t *testing.T, target string) *Proxy {
	p, err := Listen(target)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Close()) })
	return p
}

// client is one connection through the proxy.
type client struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return &client{t: t, c: c, r: bufio.NewReader(c)}
}

// roundTrip sends line and reads the echo, waiting at most wait.
func (c *client) roundTrip(line string, wait time.Duration) (string, error) {
	require.NoError(c.t, c.c.SetDeadline(time.Now().Add(wait)))
	if _, err := io.WriteString(c.c, line+"\n"); err != nil {
		return "", err
	}
	got, err := c.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return got[:len(got)-1], nil
}

func TestProxyForwards(t *testing.T) {
	e := newEchoServer(t)
	p := startProxy(t, e.l.Addr().String())
	c := dial(t, p.Addr())
	for _, line := range []string{"a", "b", "c"} {
		got, err := c.roundTrip(line, 2*time.Second)
		require.NoError(t, err)
		assert.Equal(t, line, got)
	}
}

func TestProxyLatencyDelaysBothDirections(t *testing.T) {
	e := newEchoServer(t)
	p := startProxy(t, e.l.Addr().String())
	c := dial(t, p.Addr())
	p.SetLatency(50 * time.Millisecond)
	start := time.Now()
	_, err := c.roundTrip("slow", 5*time.Second)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond, "one delay per direction")

	p.SetLatency(0)
	got, err := c.roundTrip("fast", 5*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "fast", got)
}

func TestProxyCutBlackholesThenRestoreDropsHeldBytes(t *testing.T) {
	e := newEchoServer(t)
	p := startProxy(t, e.l.Addr().String())
	old := dial(t, p.Addr())
	_, err := old.roundTrip("before", 2*time.Second)
	require.NoError(t, err)

	p.Cut()
	_, err = old.roundTrip("during", 300*time.Millisecond)
	assert.True(t, isTimeout(err), "no reply during a cut, got %v", err)
	fresh := dial(t, p.Addr()) // accepted, but silent
	_, err = fresh.roundTrip("new during", 300*time.Millisecond)
	assert.True(t, isTimeout(err), "a connection opened during the cut is silent too, got %v", err)

	p.Restore()
	_, err = old.roundTrip("after", 2*time.Second)
	assert.Error(t, err, "a connection that lived through the cut is closed")
	_, err = fresh.roundTrip("after", 2*time.Second)
	assert.Error(t, err, "so is one opened during the cut")
	again := dial(t, p.Addr())
	got, err := again.roundTrip("again", 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "again", got)
	assert.Equal(t, []string{"before\n", "again\n"}, e.received(), "bytes sent during the cut never arrive")
}

func TestProxyResetClosesCurrentConnections(t *testing.T) {
	e := newEchoServer(t)
	p := startProxy(t, e.l.Addr().String())
	c := dial(t, p.Addr())
	_, err := c.roundTrip("one", 2*time.Second)
	require.NoError(t, err)
	p.Reset()
	_, err = c.roundTrip("two", 2*time.Second)
	assert.Error(t, err)
	got, err := dial(t, p.Addr()).roundTrip("three", 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "three", got)
}

func TestProxyLoseRepliesAfterTheServerRan(t *testing.T) {
	e := newEchoServer(t)
	p := startProxy(t, e.l.Addr().String())
	c := dial(t, p.Addr())
	p.LoseReplies(1)
	_, err := c.roundTrip("ran", 2*time.Second)
	assert.Error(t, err, "the reply is lost and the connection closed")
	got, err := dial(t, p.Addr()).roundTrip("next", 2*time.Second)
	require.NoError(t, err, "only one reply is lost")
	assert.Equal(t, "next", got)
	assert.Equal(t, []string{"ran\n", "next\n"}, e.received(), "the server got the request whose reply was lost")
}

func TestProxyTargetDownRefusesClients(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	p := startProxy(t, addr)
	_, err = dial(t, p.Addr()).roundTrip("x", 2*time.Second)
	assert.Error(t, err)
}

func TestProxyCloseLeavesNoGoroutines(t *testing.T) {
	before := goleak.IgnoreCurrent()
	e := newEchoServer(t)
	p, err := Listen(e.l.Addr().String())
	require.NoError(t, err)
	idle := dial(t, p.Addr())
	_, err = idle.roundTrip("x", 2*time.Second)
	require.NoError(t, err)
	p.SetLatency(time.Hour) // a chunk waiting for its due time
	slow := dial(t, p.Addr())
	require.NoError(t, slow.c.SetDeadline(time.Now().Add(time.Second)))
	_, err = io.WriteString(slow.c, "waits\n")
	require.NoError(t, err)
	p.Cut() // a held connection
	dial(t, p.Addr())
	require.NoError(t, p.Close())
	require.NoError(t, p.Close(), "Close is idempotent")
	goleak.VerifyNone(t, before,
		goleak.IgnoreAnyFunction("github.com/streamq-dev/streamq/internal/chaos.(*echoServer).serve"),
		goleak.IgnoreAnyFunction("github.com/streamq-dev/streamq/internal/chaos.(*echoServer).echo"))
	_, err = dial(t, e.l.Addr().String()).roundTrip("server still up", 2*time.Second)
	require.NoError(t, err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded)
}
