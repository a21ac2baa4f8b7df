package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/streamq-dev/streamq"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/dashboard"
)

// uiShutdownTimeout bounds how long Ctrl-C waits for requests in flight.
const uiShutdownTimeout = 5 * time.Second

// Environment variables of "streamq ui": they keep the secrets out of the process list.
const (
	envUIToken     = "STREAMQ_UI_TOKEN"
	envUIBasicAuth = "STREAMQ_UI_BASIC_AUTH"
)

// uiFlags are the flags of "streamq ui".
type uiFlags struct {
	addr         string
	allowWrites  bool
	insecure     bool // --insecure-allow-writes
	token        string
	basicAuth    string
	allowedHosts []string
}

func uiCmd(a *app) *cobra.Command {
	var f uiFlags
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve the web dashboard: topics, partitions, groups, lag and dead letters",
		Long: `Serves the streamq web dashboard on --addr until Ctrl-C (exit code 0): topics, partitions
with lease owners and lag per group, a live chart of publish and consume rates, consumer
groups with pending entries, and dead letters with payload previews. The pages poll a JSON
API under /api/ (see docs/dashboard.md, JSON API).

It is read-only unless --allow-writes is given: then dead letters can be replayed and
deleted, group offsets reset and groups paused or resumed, each confirmed on the page and
logged on stderr.

Beyond loopback (--addr :8080, 0.0.0.0:8080, a LAN address) without --token or --basic-auth,
anyone who can reach the port can read topic and group names, lag, pending entries, message
and dead letter payloads and reasons: a warning says so. --allow-writes there refuses to
start (exit code 2) until credentials are given; --insecure-allow-writes starts it anyway,
with a warning, for a network you trust entirely.

Credentials: --token (or $` + envUIToken + `) requires "Authorization: Bearer TOKEN" on the
API (the page asks for it once); --basic-auth user:password (or $` + envUIBasicAuth + `)
requires HTTP basic auth. Prefer the environment variables: flags show in the process list.
On a loopback address only requests for that address (or localhost) are answered, which
keeps other web sites out through DNS rebinding; add names with --allowed-host.`,
		Example: `  streamq ui
  STREAMQ_UI_TOKEN=$(openssl rand -hex 16) streamq ui --addr 127.0.0.1:9000 --allow-writes
  STREAMQ_UI_BASIC_AUTH=ops:secret streamq ui --addr :8080 --allowed-host streamq.internal`,
		GroupID: groupOther,
		Args:    argsExactly(),
		RunE:    a.runE(func(cmd *cobra.Command, _ []string) error { return a.runUI(cmd.Context(), f) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	fl.BoolVar(&f.allowWrites, "allow-writes", false, "enable replay, delete, reset offset and pause (default read-only; beyond loopback needs --token or --basic-auth)")
	fl.BoolVar(&f.insecure, "insecure-allow-writes", false, "with --allow-writes, serve writes beyond loopback without authentication anyway")
	fl.StringVar(&f.token, "token", "", "require this bearer token on the API (default $"+envUIToken+")")
	fl.StringVar(&f.basicAuth, "basic-auth", "", "require HTTP basic auth, user:password (default $"+envUIBasicAuth+")")
	fl.StringSliceVar(&f.allowedHosts, "allowed-host", nil, "also answer requests for this Host (name or name:port; repeatable)")
	a.addPayloadFlags(fl)
	return cmd
}

// runUI listens, connects to Redis and serves the dashboard until ctx is cancelled.
func (a *app) runUI(ctx context.Context, f uiFlags) error {
	opts, err := f.options()
	if err != nil {
		return err
	}
	ln, err := listenUI(f.addr, opts, f.insecure)
	if err != nil {
		return err
	}
	defer func() { _ = ln.Close() }() // once served, Shutdown has closed it already
	if _, err := a.admin(ctx); err != nil {
		return err
	}
	return a.serveUI(ctx, ln, opts)
}

// options turns the flags (and environment) into dashboard options.
func (f uiFlags) options() (dashboard.Options, error) {
	token, basic := orEnv(f.token, envUIToken), orEnv(f.basicAuth, envUIBasicAuth)
	opts := dashboard.Options{AllowWrites: f.allowWrites, Token: token, AllowedHosts: f.allowedHosts}
	if f.insecure && !f.allowWrites {
		return opts, usageErrorf("--insecure-allow-writes only applies with --allow-writes")
	}
	if token != "" && basic != "" {
		return opts, usageErrorf("--token and --basic-auth are exclusive (check $%s and $%s)", envUIToken, envUIBasicAuth)
	}
	if basic != "" {
		user, pass, ok := strings.Cut(basic, ":")
		if !ok || user == "" || pass == "" {
			return opts, usageErrorf("--basic-auth must be user:password")
		}
		opts.BasicAuthUser, opts.BasicAuthPassword = user, pass
	}
	return opts, nil
}

func orEnv(v, env string) string {
	if v != "" {
		return v
	}
	return os.Getenv(env)
}

// listenUI listens on addr, and refuses writes there without credentials beyond loopback
// unless insecure.
func listenUI(addr string, opts dashboard.Options, insecure bool) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	if err := checkExposure(ln.Addr(), opts, insecure); err != nil {
		_ = ln.Close()
		return nil, err
	}
	return ln, nil
}

// serveUI serves the dashboard on ln until ctx is cancelled, then shuts down gracefully.
func (a *app) serveUI(ctx context.Context, ln net.Listener, opts dashboard.Options) error {
	opts.AllowedHosts = append(opts.AllowedHosts, loopbackHosts(ln.Addr())...)
	opts.Keyspace.StreamPrefix, opts.Keyspace.ControlPrefix = a.streamPrefix, a.controlPrefix
	opts.Payloads = streamq.PayloadConfig{Threshold: a.payloadThreshold, TTL: a.payloadRetention}
	opts.Logger = watermill.NewStdLoggerWithOut(a.stderr, false, false)
	h, err := dashboard.New(a.conn.client, opts)
	if errors.Is(err, dashboard.ErrInvalidOptions) {
		return &usageError{err: err}
	}
	if err != nil {
		return err
	}
	defer func() { _ = h.Close() }() // stops the rate sampler; returns nil
	srv := &http.Server{
		Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute, ErrorLog: log.New(io.Discard, "", 0),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	a.announceUI(ln.Addr(), opts)
	select {
	case err := <-served:
		return fmt.Errorf("serve the dashboard: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), uiShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = fmt.Errorf("serve the dashboard: %w", serr) // it failed as ctx ended
	}
	fmt.Fprintln(a.stderr, "dashboard stopped")
	return err
}

// announceUI prints where the dashboard is and how it is protected.
func (a *app) announceUI(addr net.Addr, opts dashboard.Options) {
	mode := "read-only"
	if opts.AllowWrites {
		mode = "writes enabled"
	}
	auth := "no authentication"
	switch {
	case opts.Token != "":
		auth = "bearer token"
	case opts.BasicAuthUser != "":
		auth = "basic auth"
	}
	fmt.Fprintf(a.stderr, "streamq dashboard on http://%s/ (%s, %s, Redis %s); Ctrl-C to stop\n", addr, mode, auth, a.conn.display)
	a.warnExposure(addr, opts)
}

// loopbackHosts are the Host headers a dashboard on a loopback address answers: the address
// itself and localhost, with its port. Other listeners are not restricted (nil).
func loopbackHosts(addr net.Addr) []string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsLoopback() {
		return nil
	}
	port := strconv.Itoa(tcp.Port)
	return []string{net.JoinHostPort(tcp.IP.String(), port), "localhost:" + port}
}
