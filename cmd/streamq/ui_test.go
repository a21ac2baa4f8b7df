package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// uiProcess is a running "streamq ui".
type uiProcess struct {
	cmd    *exec.Cmd
	url    string        // http://127.0.0.1:PORT
	exited chan error    // Wait's result
	stderr chan []string // every stderr line, once the process has exited
}

// uiEnv is the test's environment without $REDIS_URL and the ui's credentials, plus extra.
func uiEnv(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "REDIS_URL" && name != "STREAMQ_UI_TOKEN" && name != "STREAMQ_UI_BASIC_AUTH" {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

var uiURL = regexp.MustCompile(`streamq dashboard on (http://[^/ ]+)/`)

// startUI runs "streamq ui --addr 127.0.0.1:0 args..." with env added, and waits for the
// line that announces its URL.
func (e *cliEnv) startUI(env []string, args ...string) *uiProcess {
	t := e.t
	t.Helper()
	cmd := e.command(context.Background(), append([]string{"ui", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = uiEnv(env...)
	pipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &uiProcess{cmd: cmd, exited: make(chan error, 1), stderr: make(chan []string, 1)}
	found := make(chan string, 1)
	go p.readStderr(pipe, found)
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-p.exited }) //nolint:errcheck // waits for the exit; its error is the kill's
	select {
	case p.url = <-found:
	case err := <-p.exited:
		p.exited <- err
		t.Fatalf("streamq ui exited before serving: %v\n%s", err, strings.Join(<-p.stderr, "\n"))
	case <-time.After(30 * time.Second):
		t.Fatal("streamq ui did not announce its address")
	}
	return p
}

func (p *uiProcess) readStderr(r io.Reader, found chan<- string) {
	var lines []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if m := uiURL.FindStringSubmatch(sc.Text()); m != nil {
			found <- m[1]
		}
	}
	p.exited <- p.cmd.Wait()
	p.stderr <- lines
}

// interrupt sends SIGINT and returns the exit code and stderr.
func (p *uiProcess) interrupt(t *testing.T) (int, []string) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
	select {
	case err := <-p.exited:
		p.exited <- err
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		}
		return code, <-p.stderr
	case <-time.After(30 * time.Second):
		t.Fatal("streamq ui did not stop on SIGINT")
		return 0, nil
	}
}

func (p *uiProcess) get(t *testing.T, path string, headers ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, p.url+path, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, b
}

func TestUIServesTheDashboardAndStopsOnInterrupt(t *testing.T) {
	e := newCLIEnv(t)
	e.ok("create-topic", "orders", "--partitions", "3")
	p := e.startUI([]string{"STREAMQ_UI_TOKEN=tok-123"}, "--allow-writes")

	status, _ := p.get(t, "/api/topics")
	assert.Equal(t, http.StatusUnauthorized, status, "the token comes from $STREAMQ_UI_TOKEN")
	status, body := p.get(t, "/api/topics", "Authorization", "Bearer tok-123")
	require.Equal(t, http.StatusOK, status, "%s", body)
	var topics struct {
		Topics []struct {
			Topic      string `json:"topic"`
			Partitions int    `json:"partitions"`
		} `json:"topics"`
	}
	require.NoError(t, json.Unmarshal(body, &topics))
	require.Len(t, topics.Topics, 1)
	assert.Equal(t, "orders", topics.Topics[0].Topic)
	assert.Equal(t, 3, topics.Topics[0].Partitions)

	var sess struct {
		ReadOnly bool   `json:"readOnly"`
		Auth     string `json:"auth"`
	}
	_, body = p.get(t, "/api/session", "Authorization", "Bearer tok-123")
	require.NoError(t, json.Unmarshal(body, &sess))
	assert.False(t, sess.ReadOnly)
	assert.Equal(t, "token", sess.Auth)

	status, _ = p.get(t, "/")
	assert.Equal(t, http.StatusOK, status)
	_, port, err := net.SplitHostPort(strings.TrimPrefix(p.url, "http://"))
	require.NoError(t, err)
	status, _ = p.get(t, "/", "Host", "localhost:"+port)
	assert.Equal(t, http.StatusOK, status)
	status, _ = p.get(t, "/", "Host", "rebound.example:"+port)
	assert.Equal(t, http.StatusForbidden, status, "a loopback dashboard answers only loopback names")

	code, stderr := p.interrupt(t)
	assert.Equal(t, 0, code, "%s", strings.Join(stderr, "\n"))
	out := strings.Join(stderr, "\n")
	assert.Contains(t, out, "writes enabled, bearer token")
	assert.Contains(t, out, "dashboard stopped")
	assert.NotContains(t, out, "tok-123")
}

func TestUIReadOnlyWithBasicAuth(t *testing.T) {
	e := newCLIEnv(t)
	p := e.startUI(nil, "--basic-auth", "ops:pw")
	status, _ := p.get(t, "/")
	assert.Equal(t, http.StatusUnauthorized, status)
	status, body := p.get(t, "/api/session", "Authorization", "Basic b3BzOnB3") // ops:pw
	require.Equal(t, http.StatusOK, status)
	var sess struct {
		ReadOnly bool `json:"readOnly"`
	}
	require.NoError(t, json.Unmarshal(body, &sess))
	assert.True(t, sess.ReadOnly, "read-only without --allow-writes")
	code, _ := p.interrupt(t)
	assert.Equal(t, 0, code)
}

func TestUIBadFlags(t *testing.T) {
	e := newCLIEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	tests := []struct {
		name string
		args []string
		env  []string
		code int
		want string
	}{
		{"basic auth without colon", []string{"--basic-auth", "ops"}, nil, exitUsage, "user:password"},
		{"token and basic auth", []string{"--token", "t", "--basic-auth", "a:b"}, nil, exitUsage, "exclusive"},
		{"token from env and basic auth", []string{"--basic-auth", "a:b"}, []string{"STREAMQ_UI_TOKEN=t"}, exitUsage, "exclusive"},
		{"address in use", []string{"--addr", ln.Addr().String()}, nil, exitError, "listen on"},
		{"writes beyond loopback without credentials", []string{"--addr", "0.0.0.0:0", "--allow-writes"}, nil, exitUsage,
			"without authentication: anyone who can reach it could replay, delete and clear dead letters"},
		{"insecure without writes", []string{"--insecure-allow-writes"}, nil, exitUsage, "only applies with --allow-writes"},
		{"argument", []string{"extra"}, nil, exitUsage, "unexpected argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := e.command(ctx, append([]string{"ui"}, tt.args...)...)
			cmd.Env = uiEnv(tt.env...)
			r := runCmd(t, cmd)
			assert.Equal(t, tt.code, r.code, "%s", r.stderr)
			assert.Contains(t, r.stderr, tt.want)
		})
	}
}

// TestUIBeyondLoopback: beyond loopback without credentials the read-only dashboard warns what
// anyone can read, writes start only with --insecure-allow-writes and warn what anyone can
// do; with credentials there is no warning.
func TestUIBeyondLoopback(t *testing.T) {
	e := newCLIEnv(t)
	const read = "warning: listening beyond loopback without --token or --basic-auth: anyone who can reach it can read " +
		"topic and consumer group names, consumer names, lag and pending entries, message payloads and metadata (message browser), " +
		"dead letter payloads, metadata and reasons, and the Redis servers' addresses and memory"
	write := regexp.MustCompile(`WARNING: --insecure-allow-writes: anyone who can reach http://\S+/ can replay, ` +
		`delete and clear dead letters, reset group offsets and pause or resume groups, with no authentication`)
	tests := []struct {
		name        string
		args, env   []string
		mode        string
		read, write bool
	}{
		{"read-only", nil, nil, "read-only, no authentication", true, false},
		{"insecure writes", []string{"--allow-writes", "--insecure-allow-writes"}, nil, "writes enabled, no authentication", true, true},
		{"writes with a token", []string{"--allow-writes"}, []string{"STREAMQ_UI_TOKEN=tok"}, "writes enabled, bearer token", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := e.startUI(tt.env, append([]string{"--addr", "0.0.0.0:0"}, tt.args...)...)
			code, stderr := p.interrupt(t)
			out := strings.Join(stderr, "\n")
			assert.Equal(t, 0, code, "%s", out)
			assert.Contains(t, out, tt.mode)
			assert.Equal(t, tt.read, strings.Contains(out, read), "the read warning:\n%s", out)
			assert.Equal(t, tt.write, write.MatchString(out), "the write warning:\n%s", out)
		})
	}
}
