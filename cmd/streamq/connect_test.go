package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/redistest"
)

// runAt runs the binary against url (--redis-url), timing it.
func runAt(t *testing.T, url string, args ...string) (result, time.Duration) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--redis-url", url}, args...)...)
	cmd.Env = envWithout("REDIS_URL")
	start := time.Now()
	r := runCmd(t, cmd)
	return r, time.Since(start)
}

// freeTCPPort is a port nothing listens on now.
func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "streamq test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	return certFile, keyFile
}

// startTLS starts a redis-server that also listens with TLS (a self-signed certificate) and
// returns the TLS port's address.
func startTLS(t *testing.T) string {
	t.Helper()
	cert, key := selfSigned(t, t.TempDir())
	port := freeTCPPort(t)
	redistest.StartWith(t, "tls-port "+strconv.Itoa(port), "tls-cert-file "+cert, "tls-key-file "+key,
		"tls-ca-cert-file "+cert, "tls-auth-clients no")
	return "127.0.0.1:" + strconv.Itoa(port)
}

// requirePassword makes srv's default user need password until the test ends.
func requirePassword(t *testing.T, srv *redistest.Server, password string) {
	t.Helper()
	ctx := context.Background()
	c := srv.Client(t)
	require.NoError(t, c.ConfigSet(ctx, "requirepass", password).Err())
	t.Cleanup(func() { // before the server's own cleanup, which shuts it down without a password
		authed := redis.NewClient(&redis.Options{Addr: srv.Addr(), Password: password, DisableIdentity: true})
		defer func() { _ = authed.Close() }()
		_ = authed.ConfigSet(ctx, "requirepass", "").Err()
	})
}

// TestCLIConnectionErrors: each way of failing to talk to Redis has its own message, naming
// the server and where its URL came from, and exit code 1, answered at once rather than at
// the connection deadline (pingTimeout).
func TestCLIConnectionErrors(t *testing.T) {
	plain := redistest.Start(t)
	locked := redistest.Start(t)
	requirePassword(t, locked, "s3cret")
	tlsAddr := startTLS(t)
	cases := []struct {
		name, url string
		want      []string
	}{
		{"refused", "redis://127.0.0.1:" + strconv.Itoa(freeTCPPort(t)),
			[]string{"cannot reach Redis at redis://127.0.0.1:", "(from --redis-url)", "connection refused"}},
		{"no password", locked.URL(), []string{"Redis at " + locked.URL() + " (from --redis-url) requires authentication (NOAUTH",
			"redis://:PASSWORD@HOST:PORT"}},
		{"wrong password", "redis://:wrong@" + locked.Addr(), []string{"refused the user name or password of the URL (WRONGPASS"}},
		{"unknown user", "redis://bob:s3cret@" + locked.Addr(), []string{"refused the user name or password", "bob:xxxxx@"}},
		{"rediss against plain", "rediss://" + plain.Addr(), []string{"Redis at rediss://" + plain.Addr() + " (from --redis-url)",
			"does not speak TLS", "use redis://"}},
		{"redis against TLS", "redis://" + tlsAddr, []string{"the server speaks TLS; use rediss://"}},
		{"untrusted certificate", "rediss://" + tlsAddr, []string{"speaks TLS, but its certificate does not verify", "skip_verify=true"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, took := runAt(t, c.url, "topics")
			assert.Equal(t, exitError, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			for _, w := range c.want {
				assert.Contains(t, r.stderr, w)
			}
			assert.NotContains(t, r.stderr, "s3cret")
			assert.NotContains(t, r.stderr, "context deadline exceeded")
			assert.Less(t, took, pingTimeout, "answered before the connection deadline")
		})
	}

	t.Run("right password and TLS", func(t *testing.T) {
		r, _ := runAt(t, "redis://:s3cret@"+locked.Addr(), "topics")
		assert.Equal(t, exitOK, r.code, r.stderr)
		r, _ = runAt(t, "rediss://"+tlsAddr+"/?skip_verify=true", "topics")
		assert.Equal(t, exitOK, r.code, r.stderr)
		assert.Equal(t, "no topics\n", r.stdout)
	})
	t.Run("not found names the server", func(t *testing.T) {
		r, _ := runAt(t, plain.URL(), "info", "nope")
		assert.Equal(t, exitNotFound, r.code)
		assert.Contains(t, r.stderr, `topic not found: "nope" on Redis `+plain.URL()+" (from --redis-url)")
		cmd := exec.Command(binary, "stats", "nope", "g")
		cmd.Env = append(envWithout("REDIS_URL"), "REDIS_URL="+plain.URL())
		r = runCmd(t, cmd)
		assert.Equal(t, exitNotFound, r.code)
		assert.Contains(t, r.stderr, "on Redis "+plain.URL()+" (from REDIS_URL)")
	})
}

// TestTargetNamesItsSource: without --redis-url and REDIS_URL the command says it took the
// default, and a failure names it so.
func TestTargetNamesItsSource(t *testing.T) {
	t.Setenv("REDIS_URL", "")
	require.NoError(t, os.Unsetenv("REDIS_URL"))
	a := newApp(os.Stdout, os.Stderr, os.Stdin)
	assert.Equal(t, target{raw: defaultRedisURL, source: "default: REDIS_URL is unset"}, a.target(defaultRedisURL))
	t.Setenv("REDIS_URL", "redis://elsewhere:6379")
	assert.Equal(t, target{raw: "redis://elsewhere:6379", source: "from REDIS_URL"}, a.target(defaultRedisURL))
	a.redisURL = "redis://flag:6379"
	assert.Equal(t, "from --redis-url", a.target(defaultRedisURL).source)

	refused := "redis://127.0.0.1:" + strconv.Itoa(freeTCPPort(t))
	_, err := dial(context.Background(), target{raw: refused, source: "default: REDIS_URL is unset"}, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot reach Redis at "+refused+" (default: REDIS_URL is unset)")
	assert.Equal(t, exitError, exitCode(err))
}

// TestCLIVersion: streamq version prints the module version, Go's and the server's; an
// unreachable server is said, with exit code 0.
func TestCLIVersion(t *testing.T) {
	e := newCLIEnv(t)
	out := e.ok("version")
	assert.Regexp(t, `(?m)^streamq\s+`+regexp.QuoteMeta(version)+`, module \S+`, out, "a build from a checkout: its module version too")
	assert.Regexp(t, `(?m)^go\s+go1\.\d+`, out)
	assert.Regexp(t, `(?m)^redis\s+7\.\d+\.\d+ at `+e.url+` \(from --redis-url\)$`, out)
	var v versionView
	raw := e.jsonOf(&v, "version")
	requireKeys(t, raw, "version", "module", "commit", "modified", "go", "platform", "redis", "redisUrl")
	assert.Equal(t, version, v.Version)
	assert.NotEmpty(t, v.Module)
	assert.Regexp(t, `^7\.`, v.Redis)
	assert.Empty(t, v.RedisError)

	r, _ := runAt(t, "redis://127.0.0.1:"+strconv.Itoa(freeTCPPort(t)), "version")
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Regexp(t, `(?m)^redis\s+not reachable: cannot reach Redis at`, r.stdout)
}
