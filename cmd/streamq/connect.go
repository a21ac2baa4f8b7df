package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// pingTimeout bounds the connection check before a command runs.
const pingTimeout = 5 * time.Second

// probeTimeout bounds the transport check (does the server speak TLS, or plain RESP?) that
// tells a rediss:// URL against a plain server, or redis:// against a TLS one, within a
// second rather than at pingTimeout. A TLS server slower to answer than that is not told
// apart: PING then connects to it as usual.
const probeTimeout = 500 * time.Millisecond

// target is the Redis a command talks to: the URL as given and where it came from
// ("from --redis-url", "from REDIS_URL", "default: REDIS_URL is unset").
type target struct{ raw, source string }

// conn is an open, checked Redis connection.
type conn struct {
	client  redis.UniversalClient
	addr    string // host:port of the (first) address
	display string // the URL(s) without passwords
	source  string // target.source
	cluster bool
}

// where names the server in messages: its URL without password and where it came from.
func (c *conn) where() string { return c.display + " (" + c.source + ")" }

// onServer names the server an error of a command came from (" on Redis URL (source)"), when
// the command connected and the error is not one of the command line or of the connection
// (those name it already, or have nothing to do with it).
func (a *app) onServer(err error) string {
	var ce *connError
	if a.conn == nil || errors.As(err, &ce) || exitCode(err) == exitUsage {
		return ""
	}
	return " on Redis " + a.conn.where()
}

// connError is a failure to connect or authenticate; it exits with exitError.
type connError struct{ msg string }

func (e *connError) Error() string { return e.msg }

// dial connects to t, a redis:// or rediss:// URL (user:password@ for ACLs; host:port alone
// means redis://host:port), checks the transport of its first address (probe) and the
// connection with PING. Several comma-separated URLs or addresses, or cluster, make a Cluster
// client: the first URL gives the credentials, TLS and options (redis.ParseClusterURL), the
// others add seed addresses.
func dial(ctx context.Context, t target, cluster bool) (*conn, error) {
	parts := splitURLs(t.raw)
	if len(parts) == 0 {
		return nil, usageErrorf("empty Redis URL (%s)", t.source)
	}
	c := &conn{display: redactURLs(parts), source: t.source, cluster: cluster || len(parts) > 1}
	var tlsConfig *tls.Config
	if c.cluster {
		opts, err := clusterOptions(parts)
		if err != nil {
			return nil, usageErrorf("invalid Redis URL %s: %v", c.where(), err)
		}
		c.client, c.addr, tlsConfig = redis.NewClusterClient(opts), opts.Addrs[0], opts.TLSConfig
	} else {
		opts, err := redis.ParseURL(parts[0])
		if err != nil {
			return nil, usageErrorf("invalid Redis URL %s: %v", c.where(), err)
		}
		c.client, c.addr, tlsConfig = redis.NewClient(opts), opts.Addr, opts.TLSConfig
	}
	if err := c.check(ctx, tlsConfig); err != nil {
		_ = c.client.Close()
		return nil, err
	}
	return c, nil
}

func splitURLs(raw string) []string {
	var parts []string
	for p := range strings.SplitSeq(raw, ",") {
		if p = strings.TrimSpace(p); p != "" {
			if !strings.Contains(p, "://") {
				p = "redis://" + p
			}
			parts = append(parts, p)
		}
	}
	return parts
}

// check probes the transport, then PINGs, turning what fails into a message that names the
// server and says what to change.
func (c *conn) check(ctx context.Context, tlsConfig *tls.Config) error {
	mismatch, dialErr := probe(ctx, c.addr, tlsConfig)
	switch {
	case mismatch != nil:
		return &connError{msg: fmt.Sprintf("Redis at %s: %v", c.where(), mismatch)}
	case dialErr != nil && !c.cluster: // a Cluster may answer on another seed address
		return &connError{msg: fmt.Sprintf("cannot reach Redis at %s: %v", c.where(), dialErr)}
	}
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	err := c.client.Ping(pctx).Err()
	var verify *tls.CertificateVerificationError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &verify):
		return &connError{msg: fmt.Sprintf("Redis at %s speaks TLS, but its certificate does not verify (%v): "+
			"trust its CA, or add ?skip_verify=true to the URL to skip the check", c.where(), err)}
	case redis.HasErrorPrefix(err, "NOAUTH"):
		return &connError{msg: fmt.Sprintf("Redis at %s requires authentication (%v): give the password in the URL, "+
			"redis://:PASSWORD@HOST:PORT, or redis://USER:PASSWORD@HOST:PORT for an ACL user", c.where(), err)}
	case redis.HasErrorPrefix(err, "WRONGPASS"), redis.HasErrorPrefix(err, "ERR invalid password"):
		return &connError{msg: fmt.Sprintf("Redis at %s refused the user name or password of the URL (%v)", c.where(), err)}
	case redis.HasErrorPrefix(err, "ERR AUTH"), redis.HasErrorPrefix(err, "ERR Client sent AUTH"):
		return &connError{msg: fmt.Sprintf("Redis at %s has no password set, but the URL gives one (%v): "+
			"remove the user:password@ part", c.where(), err)}
	}
	return &connError{msg: fmt.Sprintf("cannot reach Redis at %s: %v", c.where(), err)}
}

// errPlainServer and errTLSServer are the transport mismatches probe reports.
var (
	errPlainServer = errors.New("the URL is rediss:// (TLS) but the server does not speak TLS: it answers plain Redis; use redis://")
	errTLSServer   = errors.New("the URL is redis:// but the server speaks TLS; use rediss://")
)

// probe checks, within probeTimeout once connected, that the server at addr speaks what the
// URL says: a TLS handshake when tlsConfig is set, plain RESP (an answer to PING) when not.
// On a mismatch it returns errPlainServer or errTLSServer, and the dial error of a server it
// cannot reach; one that answers neither way is left to PING to report.
func probe(ctx context.Context, addr string, tlsConfig *tls.Config) (mismatch, dialErr error) {
	if tlsConfig != nil {
		ok, err := handshakes(ctx, addr, tlsConfig)
		if ok || err != nil {
			return nil, err
		}
		if ok, _ := answersRESP(ctx, addr); ok {
			return errPlainServer, nil
		}
		return nil, nil
	}
	ok, err := answersRESP(ctx, addr)
	if ok || err != nil {
		return nil, err
	}
	if ok, _ := handshakes(ctx, addr, &tls.Config{InsecureSkipVerify: true}); ok { //nolint:gosec // only asks whether the server speaks TLS
		return errTLSServer, nil
	}
	return nil, nil
}

// probeConn dials addr (within pingTimeout) and gives the connection probeTimeout to answer.
func probeConn(ctx context.Context, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: pingTimeout}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return nc, nc.SetDeadline(time.Now().Add(probeTimeout))
}

// handshakes reports whether a TLS handshake with addr completes (a certificate that does not
// verify counts: the server speaks TLS, PING reports the certificate), or the error of a
// dial that failed.
func handshakes(ctx context.Context, addr string, cfg *tls.Config) (bool, error) {
	nc, err := probeConn(ctx, addr)
	if err != nil {
		return false, err
	}
	defer func() { _ = nc.Close() }()
	err = tls.Client(nc, cfg.Clone()).HandshakeContext(ctx)
	var verify *tls.CertificateVerificationError
	return err == nil || errors.As(err, &verify), nil
}

// answersRESP reports whether addr answers a plain inline PING with a RESP reply (+PONG, or
// an error such as -NOAUTH), or the error of a dial that failed.
func answersRESP(ctx context.Context, addr string) (bool, error) {
	nc, err := probeConn(ctx, addr)
	if err != nil {
		return false, err
	}
	defer func() { _ = nc.Close() }()
	if _, err := nc.Write([]byte("PING\r\n")); err != nil {
		return false, nil
	}
	b := make([]byte, 1)
	n, _ := nc.Read(b)
	return n == 1 && (b[0] == '+' || b[0] == '-'), nil
}

// clusterOptions parses the first URL with redis.ParseClusterURL and adds the host:port of
// the others as seed addresses.
func clusterOptions(urls []string) (*redis.ClusterOptions, error) {
	opts, err := redis.ParseClusterURL(urls[0])
	if err != nil {
		return nil, err
	}
	for _, raw := range urls[1:] {
		u, err := url.Parse(raw)
		if err != nil {
			return nil, err
		}
		if u.Scheme != "redis" && u.Scheme != "rediss" {
			return nil, fmt.Errorf("invalid URL scheme %q", u.Scheme)
		}
		host, port := u.Hostname(), u.Port()
		if host == "" {
			return nil, fmt.Errorf("no host in %s", u.Redacted())
		}
		if port == "" {
			port = "6379"
		}
		opts.Addrs = append(opts.Addrs, net.JoinHostPort(host, port))
	}
	return opts, nil
}

// redactURLs joins urls with their passwords masked.
func redactURLs(urls []string) string {
	out := make([]string, len(urls))
	for i, raw := range urls {
		if u, err := url.Parse(raw); err == nil {
			out[i] = u.Redacted()
		} else {
			out[i] = "(unparseable URL)"
		}
	}
	return strings.Join(out, ",")
}
