package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/dashboard"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// env is a redis-server of its own with an Admin and a Publisher.
type env struct {
	t      *testing.T
	ctx    context.Context
	client *redis.Client
	adm    *admin.Admin
	pub    *streamq.Publisher
	space  keys.Space
}

func newEnv(t *testing.T) *env {
	t.Helper()
	client := redistest.Start(t).Client(t)
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client}, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	return &env{t: t, ctx: context.Background(), client: client, adm: adm, pub: pub, space: keys.New("", "")}
}

// server is a dashboard served by httptest.
type server struct {
	t   *testing.T
	h   *dashboard.Handler
	srv *httptest.Server
}

// serve starts a dashboard with opts on the env's Redis, closed at cleanup.
func (e *env) serve(opts dashboard.Options) *server {
	e.t.Helper()
	h, err := dashboard.New(e.client, opts)
	require.NoError(e.t, err)
	srv := httptest.NewServer(h)
	e.t.Cleanup(func() {
		srv.Close()
		require.NoError(e.t, h.Close())
	})
	return &server{t: e.t, h: h, srv: srv}
}

// reply is one HTTP answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into v.
func (r reply) json(t *testing.T, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.body, v), "body: %s", r.body)
}

// errorText is the "error" of a JSON error body.
func (r reply) errorText(t *testing.T) string {
	t.Helper()
	var v struct {
		Error string `json:"error"`
	}
	r.json(t, &v)
	return v.Error
}

// do sends a request with headers (name, value pairs).
func (s *server) do(method, path string, body []byte, headers ...string) reply {
	s.t.Helper()
	req, err := http.NewRequest(method, s.srv.URL+path, bytes.NewReader(body))
	require.NoError(s.t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := s.srv.Client().Do(req)
	require.NoError(s.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(s.t, err)
	return reply{status: res.StatusCode, header: res.Header, body: b}
}

func (s *server) get(path string, headers ...string) reply {
	s.t.Helper()
	return s.do(http.MethodGet, path, nil, headers...)
}

// getJSON GETs path, requires 200 and decodes the body into v.
func (s *server) getJSON(path string, v any) {
	s.t.Helper()
	r := s.get(path)
	require.Equal(s.t, http.StatusOK, r.status, "GET %s: %s", path, r.body)
	r.json(s.t, v)
}

// csrf reads the CSRF token from api/session.
func (s *server) csrf() string {
	s.t.Helper()
	var sess struct {
		CSRFToken string `json:"csrfToken"`
	}
	s.getJSON("/api/session", &sess)
	return sess.CSRFToken
}

// write POSTs v as JSON the way the page does: JSON content type, the CSRF token, and the
// browser's same-origin markers.
func (s *server) write(path string, v any, extra ...string) reply {
	s.t.Helper()
	body, err := json.Marshal(v)
	require.NoError(s.t, err)
	headers := append([]string{"Content-Type", "application/json", "X-CSRF-Token", s.csrf(),
		"Sec-Fetch-Site", "same-origin", "Origin", s.srv.URL}, extra...)
	return s.do(http.MethodPost, path, body, headers...)
}

// Metadata the dead-lettering handler reads.
const (
	modeKey   = "mode"   // "dead": dead-lettered at once
	reasonKey = "reason" // the reason given to streamq.DeadLetter
)

// deadMsg is a message the "workers" group dead-letters with reason, forced to partition p.
func deadMsg(payload []byte, reason string, p int) *message.Message {
	m := message.NewMessage(watermill.NewUUID(), payload)
	m.Metadata.Set(modeKey, "dead")
	m.Metadata.Set(reasonKey, reason)
	m.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(p))
	return m
}

// workerConfig is a quick subscriber of group on a topic with partitions partitions.
func workerConfig(client redis.UniversalClient, group string, partitions int) streamq.SubscriberConfig {
	return streamq.SubscriberConfig{
		Client: client, ConsumerGroup: group, DefaultPartitionCount: partitions,
		Membership: streamq.MembershipConfig{LeaseTTL: 2 * time.Second, RenewInterval: 300 * time.Millisecond, RebalanceInterval: 150 * time.Millisecond},
		Read:       streamq.ReadConfig{BlockTime: 50 * time.Millisecond}, Delivery: streamq.DeliveryConfig{CloseTimeout: 2 * time.Second},
		Retry: streamq.RetryConfig{Policy: streamq.ExponentialBackoff{Attempts: 1}, MoverInterval: 100 * time.Millisecond},
	}
}

// deadLetter publishes msgs to topic and runs group "workers", whose handler dead-letters
// every message marked "dead", until the topic's DLQ holds want entries.
func (e *env) deadLetter(topic string, partitions int, want int64, msgs ...*message.Message) {
	t := e.t
	t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	sub, err := streamq.NewSubscriber(workerConfig(e.client, "workers", partitions), watermill.NopLogger{})
	require.NoError(t, err)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for m := range ch {
			if m.Metadata.Get(modeKey) == "dead" && m.Metadata.Get(streamq.ReplayedFromMetadata) == "" {
				_ = streamq.DeadLetter(m, errors.New(m.Metadata.Get(reasonKey)))
				m.Nack()
				continue
			}
			m.Ack()
		}
	}()
	require.NoError(t, e.pub.Publish(topic, msgs...))
	require.Eventually(t, func() bool {
		n, err := e.adm.DLQSize(e.ctx, topic)
		return err == nil && n == want
	}, 15*time.Second, 20*time.Millisecond, "DLQ of %q never reached %d entries", topic, want)
	require.NoError(t, sub.Close())
	wg.Wait()
}

// streamKey is partition p's stream key of topic.
func (e *env) streamKey(topic string, p int) string { return e.space.PartitionStream(topic, p) }

// ids returns the entry ids of partition p, oldest first.
func (e *env) ids(topic string, p int) []string {
	e.t.Helper()
	msgs, err := e.client.XRange(e.ctx, e.streamKey(topic, p), "-", "+").Result()
	require.NoError(e.t, err)
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

// publishRoundRobin publishes count messages, message i forced to partition i % partitions.
func (e *env) publishRoundRobin(topic string, count, partitions int) {
	e.t.Helper()
	msgs := make([]*message.Message, count)
	for i := range msgs {
		msgs[i] = message.NewMessage(watermill.NewUUID(), []byte("m"+strconv.Itoa(i)))
		msgs[i].Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(i%partitions))
		msgs[i].Metadata.Set("n", strconv.Itoa(i))
	}
	require.NoError(e.t, e.pub.Publish(topic, msgs...))
}

// decodeJSON decodes one JSON value from r into v.
func decodeJSON(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }
