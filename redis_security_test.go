package streamq_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// aclRules is the least a streamq user needs: its key prefixes, no dangerous commands.
// docs/reliability.md ("TLS and ACLs") documents the same rules.
const aclRules = "on >%s ~stream:topic:* ~streaming:mq:* &* +@all -@dangerous"

// TestTLSAndACLEndToEnd runs publish, consume, a retry and a dead letter over rediss:// as an
// ACL user limited to streamq's keys, and checks that no secret leaks into logs or errors.
func TestTLSAndACLEndToEnd(t *testing.T) {
	t.Parallel()
	const password = "s3cret-Pa55"
	addr, ca := startTLSRedis(t, fmt.Sprintf(aclRules, password))
	opts, err := redis.ParseURL("rediss://streamq:" + password + "@" + addr + "/0")
	require.NoError(t, err)
	opts.TLSConfig.RootCAs = ca
	opts.TLSConfig.ServerName = "127.0.0.1"
	client := redis.NewClient(opts)
	defer client.Close()

	logs := watermill.NewCaptureLogger()
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 2}, logs)
	require.NoError(t, err)
	defer pub.Close()
	cfg := streamqtest.FastSub(client, "secure")
	cfg.Retry.Policy = streamq.ExponentialBackoff{Attempts: 1}
	cfg.DefaultPartitionCount = 2
	sub, err := streamq.NewSubscriber(cfg, logs)
	require.NoError(t, err)
	defer sub.Close()
	ch, err := sub.Subscribe(context.Background(), "secure")
	require.NoError(t, err)

	for i := 0; i < 20; i++ {
		require.NoError(t, pub.Publish("secure", message.NewMessage(watermill.NewUUID(), []byte(fmt.Sprint(i)))))
	}
	acked, nacks := 0, 0
	deadline := time.After(15 * time.Second)
	for acked < 19 || nacks < 2 {
		select {
		case m := <-ch:
			if string(m.Payload) == "7" { // retried once, then dead-lettered
				nacks++
				m.Nack()
				continue
			}
			acked++
			m.Ack()
		case <-deadline:
			t.Fatalf("acked %d, nacks %d", acked, nacks)
		}
	}
	require.Eventually(t, func() bool { return sub.Stats().DeadLettered == 1 }, 5*time.Second, 20*time.Millisecond)

	// A key outside the ACL pattern is refused: the rules really are in force.
	assert.Error(t, client.Set(context.Background(), "elsewhere", "x", 0).Err())
	// A wrong password fails without echoing it.
	bad := opts
	bad.Password = "wrong-" + password
	badClient := redis.NewClient(bad)
	defer badClient.Close()
	badPub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: badClient}, logs)
	require.NoError(t, err)
	defer badPub.Close()
	err = badPub.Publish("secure", message.NewMessage(watermill.NewUUID(), nil))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), password)

	for _, msgs := range logs.Captured() {
		for _, m := range msgs {
			assert.NotContains(t, fmt.Sprint(m.Msg, m.Fields, m.Err), password, "secret in a log line")
		}
	}
}

// startTLSRedis starts a TLS-only redis-server with the default user off and a "streamq"
// user with rules, and returns its address and the CA that signed its certificate.
func startTLSRedis(t *testing.T, rules string) (string, *x509.CertPool) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if redistest.RequireRedis() {
			t.Fatal("redis-server not found (apt-get install redis-server)")
		}
		t.Skip("redis-server not found on PATH; install it (apt-get install redis-server)")
	}
	dir := t.TempDir()
	pool := writeCerts(t, dir)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	conf := strings.Join([]string{
		"port 0", fmt.Sprintf("tls-port %d", port), "bind 127.0.0.1", "save \"\"", "appendonly no",
		"dir " + dir, "tls-cert-file " + filepath.Join(dir, "server.crt"), "tls-key-file " + filepath.Join(dir, "server.key"),
		"tls-ca-cert-file " + filepath.Join(dir, "ca.crt"), "tls-auth-clients no",
		"user default off", "user streamq " + rules,
	}, "\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "redis.conf"), []byte(conf), 0o600))
	cmd := exec.Command(bin, filepath.Join(dir, "redis.conf"))
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	require.Eventually(t, func() bool {
		c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "TLS redis-server did not start")
	return addr, pool
}

func writeCerts(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "streamq test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	srv := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	caCert, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	der, err := x509.CreateCertificate(rand.Reader, srv, caCert, &key.PublicKey, caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	write := func(name, typ string, b []byte) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600))
	}
	write("ca.crt", "CERTIFICATE", caDER)
	write("server.crt", "CERTIFICATE", der)
	write("server.key", "EC PRIVATE KEY", keyDER)
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return pool
}

// A Publisher or Subscriber whose client lacks the server's password, or has a wrong one, gets
// an error that says so and what to set: never the protocol error an unauthenticated pipeline
// meets. (A password given to a server without one is ignored by go-redis.)
func TestAuthErrorsSaySo(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	require.NoError(t, srv.Client(t).ConfigSet(context.Background(), "requirepass", "s3cret").Err())
	t.Cleanup(func() { // the server's own cleanup talks to it without a password
		authed := redis.NewClient(&redis.Options{Addr: srv.Addr(), Password: "s3cret"})
		defer authed.Close()
		_ = authed.ConfigSet(context.Background(), "requirepass", "").Err()
	})
	cases := []struct {
		name string
		opts *redis.Options
		want string
	}{
		{"no password", &redis.Options{Addr: srv.Addr()}, "requires authentication and the client gave none"},
		{"wrong password", &redis.Options{Addr: srv.Addr(), Password: "wrong"}, "refused the client's user name or password"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client := redis.NewClient(tc.opts)
			t.Cleanup(func() { _ = client.Close() })
			pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4}, nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = pub.Close() })
			msgs := make([]*message.Message, 20)
			for i := range msgs {
				msgs[i] = message.NewMessage(watermill.NewUUID(), []byte("x"))
			}
			err = pub.Publish("orders", msgs...)
			require.ErrorIs(t, err, streamq.ErrInvalidConfig)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "multibulk")

			sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{Client: client, ConsumerGroup: "g"}, nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = sub.Close() })
			_, err = sub.Subscribe(context.Background(), "orders")
			require.ErrorIs(t, err, streamq.ErrInvalidConfig)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
