package dashboard

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/admin"
)

// Handler serves the dashboard: the pages under "/" and the JSON API under "/api/" (relative
// to where it is mounted). It is safe for concurrent use. Close stops its rate sampler.
type Handler struct {
	opts    Options
	adm     *admin.Admin
	csrf    string // the per-handler token writes must carry in the X-CSRF-Token header
	auth    *authenticator
	sampler *sampler
	memory  memoryReader
	uses    useReader
	root    http.Handler
}

var _ http.Handler = (*Handler)(nil)

// New returns a dashboard over client (single node, Sentinel or Cluster). It never closes
// client. Options are checked by Validate; a bad one is an error wrapping ErrInvalidOptions.
// Call Close when the handler is no longer served.
func New(client redis.UniversalClient, opts Options) (*Handler, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: client is required", ErrInvalidOptions)
	}
	opts.setDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	adm, err := admin.New(client, admin.Options{Keyspace: opts.Keyspace,
		Payloads: opts.Payloads})
	if err != nil {
		return nil, fmt.Errorf("dashboard admin: %w", err)
	}
	csrf, err := randomToken()
	if err != nil {
		return nil, err
	}
	h := &Handler{
		opts: opts, adm: adm, csrf: csrf, auth: newAuthenticator(opts),
		sampler: newSampler(adm, opts),
	}
	h.root = h.middleware(h.routes())
	return h, nil
}

// ServeHTTP serves the pages and the API.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.root.ServeHTTP(w, r)
}

// Close stops the history sampler and waits for it. The handler keeps answering, without
// recording history. A second Close returns nil.
func (h *Handler) Close() error {
	h.sampler.close()
	return nil
}

// middleware wraps the routes in the security layers, outermost first: security headers,
// the base path, allowed hosts, authentication.
func (h *Handler) middleware(routes http.Handler) http.Handler {
	next := h.auth.wrap(routes)
	next = allowHosts(h.opts.AllowedHosts, next)
	if base := strings.TrimSuffix(h.opts.BasePath, "/"); base != "" {
		next = stripBase(base, next)
	}
	return secureHeaders(slashRoot(next))
}

// slashRoot redirects an empty path (mounted with StripPrefix("/x") and asked for "/x") to
// the mount path with its slash: the pages' relative links need it.
func slashRoot(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" {
			redirectToSlash(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// stripBase serves next under base: base itself redirects to base + "/", paths outside it
// are not found.
func stripBase(base string, next http.Handler) http.Handler {
	strip := http.StripPrefix(base, next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == base {
			redirectToSlash(w, r)
			return
		}
		strip.ServeHTTP(w, r)
	})
}

// routes registers the pages and the API. Write endpoints are POST only and pass through
// h.write (read-only mode, CSRF, logging).
func (h *Handler) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", serveIndex)
	mux.HandleFunc("GET /assets/{file...}", serveAsset)
	read := func(pattern string, fn apiFunc) { mux.Handle("GET /api/"+pattern, apiHandler(fn)) }
	write := func(pattern, action string, fn writeFunc) {
		mux.Handle("POST /api/"+pattern, apiHandler(h.write(action, fn)))
	}
	read("session", h.session)
	read("topics", h.topics)
	read("topics/{topic}", h.topic)
	read("topics/{topic}/rates", h.rates)
	read("topics/{topic}/messages", h.messages)
	read("topics/{topic}/groups", h.groups)
	read("topics/{topic}/groups/{group}", h.group)
	read("topics/{topic}/groups/{group}/pending", h.pending)
	read("topics/{topic}/groups/{group}/reset-preview", h.resetPreview)
	read("dlq", h.dlqTopics)
	read("topics/{topic}/dlq", h.dlqEntries)
	read("topics/{topic}/dlq/reasons", h.dlqReasons)
	read("topics/{topic}/dlq/{partition}/{id}", h.dlqEntry)
	write("topics/{topic}/groups/{group}/reset-offset", "reset-offset", h.resetOffset)
	write("topics/{topic}/groups/{group}/pause", "pause-group", h.pauseGroup)
	write("topics/{topic}/groups/{group}/resume", "resume-group", h.resumeGroup)
	write("topics/{topic}/dlq/replay", "dlq-replay", h.dlqReplay)
	write("topics/{topic}/dlq/replay-all", "dlq-replay-all", h.dlqReplayAll)
	write("topics/{topic}/dlq/delete", "dlq-delete", h.dlqDelete)
	write("topics/{topic}/dlq/clear", "dlq-clear", h.dlqClear)
	return mux
}

// redirectToSlash redirects to the request's own path (before any StripPrefix) plus "/". A
// path a browser would read as another host's ("//host", "/\host") is not found instead.
func redirectToSlash(w http.ResponseWriter, r *http.Request) {
	u, err := url.ParseRequestURI(r.RequestURI)
	if err != nil || !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") || strings.HasPrefix(u.Path, "/\\") {
		http.NotFound(w, r)
		return
	}
	target := u.Path + "/"
	if u.RawQuery != "" {
		target += "?" + u.RawQuery
	}
	http.Redirect(w, r, target, http.StatusMovedPermanently)
}

// randomToken returns 32 random bytes, base64url.
func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
