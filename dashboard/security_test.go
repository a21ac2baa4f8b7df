package dashboard_test

import (
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/dashboard"
)

func TestPagesAndSecurityHeaders(t *testing.T) {
	s := newEnv(t).serve(dashboard.Options{})
	tests := []struct {
		path, contentType string
		status            int
	}{
		{"/", "text/html; charset=utf-8", http.StatusOK},
		{"/assets/app.js", "text/javascript; charset=utf-8", http.StatusOK},
		{"/assets/pages/dlq.js", "text/javascript; charset=utf-8", http.StatusOK},
		{"/assets/style.css", "text/css; charset=utf-8", http.StatusOK},
		{"/assets/favicon.svg", "image/svg+xml", http.StatusOK},
		{"/api/session", "application/json; charset=utf-8", http.StatusOK},
		{"/assets/nope.js", "", http.StatusNotFound},
		{"/assets/pages", "", http.StatusNotFound}, // a directory is not listed
		{"/assets/../dashboard.go", "", http.StatusNotFound},
		{"/api/nope", "", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			r := s.get(tt.path)
			require.Equal(t, tt.status, r.status, "%s", r.body)
			if tt.contentType != "" {
				assert.Equal(t, tt.contentType, r.header.Get("Content-Type"))
			}
			csp := r.header.Get("Content-Security-Policy")
			assert.Contains(t, csp, "script-src 'self'")
			assert.Contains(t, csp, "frame-ancestors 'none'")
			assert.Contains(t, csp, "default-src 'none'")
			assert.NotContains(t, csp, "unsafe-inline")
			assert.Equal(t, "nosniff", r.header.Get("X-Content-Type-Options"))
			assert.Equal(t, "DENY", r.header.Get("X-Frame-Options"))
		})
	}
	r := s.get("/api/session")
	assert.Equal(t, "no-store", r.header.Get("Cache-Control"))
	assert.Equal(t, http.StatusMethodNotAllowed, s.get("/api/topics/x/dlq/replay").status, "writes are POST only")
}

// TestAssetsPutDataOnlyAsText checks the front-end source: no HTML parsing sinks, no inline
// script or style, no external resources.
func TestAssetsPutDataOnlyAsText(t *testing.T) {
	sinks := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|DOMParser|createContextualFragment|setAttribute\(\s*['"]on`)
	external := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//`)
	var files int
	err := filepath.WalkDir("assets", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		src := string(b)
		assert.Empty(t, sinks.FindString(src), "%s uses an HTML sink", path)
		assert.Empty(t, external.FindString(src), "%s loads an external resource", path)
		if strings.HasSuffix(path, ".html") {
			assert.NotRegexp(t, `<script(?:\s+type="module")?>`, src, "%s: inline script", path)
			assert.NotContains(t, src, "style=", "%s: inline style", path)
			assert.NotContains(t, src, "<style", "%s: inline style", path)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, files, 8)
}

func TestSession(t *testing.T) {
	e := newEnv(t)
	var ro, rw struct {
		ReadOnly  bool   `json:"readOnly"`
		Auth      string `json:"auth"`
		CSRFToken string `json:"csrfToken"`
		RefreshMs int64  `json:"refreshMs"`
	}
	e.serve(dashboard.Options{}).getJSON("/api/session", &ro)
	assert.True(t, ro.ReadOnly)
	assert.Equal(t, "none", ro.Auth)
	assert.Empty(t, ro.CSRFToken, "no CSRF token when nothing can be written")
	assert.Equal(t, int64(2000), ro.RefreshMs)

	s := e.serve(dashboard.Options{AllowWrites: true})
	s.getJSON("/api/session", &rw)
	assert.False(t, rw.ReadOnly)
	assert.Len(t, rw.CSRFToken, 43, "32 random bytes, base64url")
	assert.Equal(t, rw.CSRFToken, s.csrf(), "one token per handler")
	assert.NotEqual(t, rw.CSRFToken, e.serve(dashboard.Options{AllowWrites: true}).csrf(), "another handler, another token")
}

// TestWritesRefused sends the same write with one protection missing at a time; each is
// refused and nothing changes.
func TestWritesRefused(t *testing.T) {
	e := newEnv(t)
	e.deadLetter("orders", 2, 1, deadMsg([]byte("x"), "bad", 1))
	dead, err := e.adm.DLQEntries(e.ctx, "orders", 10)
	require.NoError(t, err)
	body := []byte(`{"entries":[{"partition":1,"id":"` + dead[0].ID + `"}]}`)
	const path = "/api/topics/orders/dlq/replay"

	ro := e.serve(dashboard.Options{})
	r := ro.do(http.MethodPost, path, body, "Content-Type", "application/json", "X-CSRF-Token", "anything")
	assert.Equal(t, http.StatusForbidden, r.status)
	assert.Contains(t, r.errorText(t), "read-only")

	s := e.serve(dashboard.Options{AllowWrites: true})
	good := s.csrf()
	tests := []struct {
		name    string
		headers []string
		status  int
	}{
		{"no CSRF header", []string{"Content-Type", "application/json"}, http.StatusForbidden},
		{"wrong CSRF header", []string{"Content-Type", "application/json", "X-CSRF-Token", good[:42] + "x"}, http.StatusForbidden},
		{"cross-site fetch", []string{"Content-Type", "application/json", "X-CSRF-Token", good, "Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"same-site fetch", []string{"Content-Type", "application/json", "X-CSRF-Token", good, "Sec-Fetch-Site", "same-site"}, http.StatusForbidden},
		{"foreign Origin", []string{"Content-Type", "application/json", "X-CSRF-Token", good, "Origin", "https://evil.example"}, http.StatusForbidden},
		{"null Origin", []string{"Content-Type", "application/json", "X-CSRF-Token", good, "Origin", "null"}, http.StatusForbidden},
		{"form post", []string{"Content-Type", "application/x-www-form-urlencoded", "X-CSRF-Token", good}, http.StatusUnsupportedMediaType},
		{"text/plain", []string{"Content-Type", "text/plain", "X-CSRF-Token", good}, http.StatusUnsupportedMediaType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(http.MethodPost, path, body, tt.headers...)
			assert.Equal(t, tt.status, r.status, "%s", r.body)
		})
	}
	n, err := e.adm.DLQSize(e.ctx, "orders")
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	assert.Len(t, e.ids("orders", 1), 1, "nothing was replayed")

	r = s.write(path, map[string]any{"entries": []map[string]any{{"partition": 1, "id": dead[0].ID}}})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Len(t, e.ids("orders", 1), 2, "with every protection satisfied the replay runs")
}

func TestReadOnlyRefusesEveryWrite(t *testing.T) {
	e := newEnv(t)
	e.deadLetter("orders", 2, 1, deadMsg([]byte("x"), "bad", 0))
	s := e.serve(dashboard.Options{})
	for _, path := range []string{
		"/api/topics/orders/dlq/replay", "/api/topics/orders/dlq/replay-all", "/api/topics/orders/dlq/delete",
		"/api/topics/orders/dlq/clear", "/api/topics/orders/groups/workers/reset-offset",
		"/api/topics/orders/groups/workers/pause", "/api/topics/orders/groups/workers/resume",
	} {
		r := s.write(path, map[string]any{})
		assert.Equal(t, http.StatusForbidden, r.status, path)
		assert.Contains(t, r.errorText(t), "read-only", path)
	}
	n, err := e.adm.DLQSize(e.ctx, "orders")
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
}

func TestBearerToken(t *testing.T) {
	e := newEnv(t)
	s := e.serve(dashboard.Options{Token: "s3cret-token", AllowWrites: true})
	r := s.get("/api/session")
	assert.Equal(t, http.StatusUnauthorized, r.status)
	assert.Equal(t, `Bearer realm="streamq"`, r.header.Get("WWW-Authenticate"))
	assert.Equal(t, http.StatusUnauthorized, s.get("/api/topics", "Authorization", "Bearer s3cret-tokeN").status)
	assert.Equal(t, http.StatusUnauthorized, s.get("/api/topics", "Authorization", "Basic czNjcmV0LXRva2Vu").status)
	assert.Equal(t, http.StatusOK, s.get("/api/topics", "Authorization", "Bearer s3cret-token").status)
	assert.Equal(t, http.StatusOK, s.get("/api/topics", "Authorization", "bearer s3cret-token").status)
	assert.Equal(t, http.StatusOK, s.get("/").status, "the page holds no data and asks for the token")
	assert.Equal(t, http.StatusOK, s.get("/assets/app.js").status)

	var sess struct {
		Auth      string `json:"auth"`
		CSRFToken string `json:"csrfToken"`
	}
	s.get("/api/session", "Authorization", "Bearer s3cret-token").json(t, &sess)
	assert.Equal(t, "token", sess.Auth)
	r = s.do(http.MethodPost, "/api/topics/orders/dlq/clear", []byte(`{}`),
		"Content-Type", "application/json", "X-CSRF-Token", sess.CSRFToken)
	assert.Equal(t, http.StatusUnauthorized, r.status, "a write without the token fails even with the CSRF header")
}

func TestBasicAuth(t *testing.T) {
	e := newEnv(t)
	s := e.serve(dashboard.Options{BasicAuthUser: "ops", BasicAuthPassword: "pa55"})
	for _, path := range []string{"/", "/assets/app.js", "/api/session"} {
		r := s.get(path)
		assert.Equal(t, http.StatusUnauthorized, r.status, path)
		assert.Contains(t, r.header.Get("WWW-Authenticate"), `Basic realm="streamq"`, path)
	}
	req := func(user, pass string) int {
		hr, err := http.NewRequest(http.MethodGet, s.srv.URL+"/api/topics", nil)
		require.NoError(t, err)
		hr.SetBasicAuth(user, pass)
		res, err := s.srv.Client().Do(hr)
		require.NoError(t, err)
		_ = res.Body.Close()
		return res.StatusCode
	}
	assert.Equal(t, http.StatusOK, req("ops", "pa55"))
	assert.Equal(t, http.StatusUnauthorized, req("ops", "pa56"))
	assert.Equal(t, http.StatusUnauthorized, req("opx", "pa55"))
	assert.Equal(t, http.StatusUnauthorized, req("", ""))
}

func TestAllowedHosts(t *testing.T) {
	e := newEnv(t)
	s := e.serve(dashboard.Options{AllowedHosts: []string{"localhost", "127.0.0.1:1"}})
	host := strings.TrimPrefix(s.srv.URL, "http://")
	port := host[strings.LastIndexByte(host, ':'):]
	assert.Equal(t, http.StatusForbidden, s.get("/api/topics").status, "127.0.0.1 on another port")
	assert.Equal(t, http.StatusOK, s.get("/api/topics", "Host", "localhost"+port).status)
	assert.Equal(t, http.StatusOK, s.get("/api/topics", "Host", "LOCALHOST").status)
	assert.Equal(t, http.StatusForbidden, s.get("/api/topics", "Host", "rebound.example"+port).status)
	assert.Equal(t, http.StatusForbidden, s.get("/", "Host", "rebound.example"+port).status)
}

// TestMounting serves the handler under a path both ways: behind http.StripPrefix, and
// with BasePath.
func TestMounting(t *testing.T) {
	e := newEnv(t)
	h, err := dashboard.New(e.client, dashboard.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", h))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s := &server{t: t, h: h, srv: srv}
	assert.Equal(t, http.StatusOK, s.get("/ops/").status)
	assert.Equal(t, http.StatusOK, s.get("/ops/api/topics").status)
	assert.Equal(t, http.StatusOK, s.get("/ops").status, "redirected to /ops/")
	assert.Equal(t, http.StatusNotFound, s.get("/api/topics").status)

	// Called with an empty path (StripPrefix of the exact mount path) it redirects to "/".
	w := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/streamq", nil)
	req.URL.Path = ""
	h.ServeHTTP(w, req)
	assert.Equal(t, http.StatusMovedPermanently, w.Code)
	assert.Equal(t, "/streamq/", w.Header().Get("Location"))
	// Not when the request's path is one a browser reads as another host's.
	for _, uri := range []string{"//evil.example", "/\\evil.example"} {
		w := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/streamq", nil)
		req.RequestURI, req.URL.Path = uri, ""
		h.ServeHTTP(w, req)
		assert.Equal(t, http.StatusNotFound, w.Code, uri)
		assert.Empty(t, w.Header().Get("Location"), uri)
	}

	based := e.serve(dashboard.Options{BasePath: "/streamq/"})
	assert.Equal(t, http.StatusOK, based.get("/streamq/").status)
	assert.Equal(t, http.StatusOK, based.get("/streamq/api/session").status)
	assert.Equal(t, http.StatusOK, based.get("/streamq/assets/app.js").status)
	assert.Equal(t, http.StatusOK, based.get("/streamq").status, "redirected to /streamq/")
	assert.Equal(t, http.StatusNotFound, based.get("/api/session").status)
}

// TestWritesAreLoggedWithoutSecrets checks the write log: action, target, outcome, the
// basic-auth user, and never the token or password.
func TestWritesAreLoggedWithoutSecrets(t *testing.T) {
	e := newEnv(t)
	e.deadLetter("orders", 1, 1, deadMsg([]byte("x"), "bad", 0))
	logger := watermill.NewCaptureLogger()
	s := e.serve(dashboard.Options{AllowWrites: true, BasicAuthUser: "ops", BasicAuthPassword: "pa55-word", Logger: logger})
	auth := []string{"Authorization", "Basic b3BzOnBhNTUtd29yZA=="} // ops:pa55-word
	var sess struct {
		CSRFToken string `json:"csrfToken"`
	}
	s.get("/api/session", auth...).json(t, &sess)
	headers := append([]string{"Content-Type", "application/json", "X-CSRF-Token", sess.CSRFToken}, auth...)
	r := s.do(http.MethodPost, "/api/topics/orders/dlq/clear", []byte(`{}`), headers...)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r = s.do(http.MethodPost, "/api/topics/orders/dlq/clear", []byte(`{}`), append([]string{"Content-Type", "application/json"}, auth...)...)
	require.Equal(t, http.StatusForbidden, r.status)

	infos := logger.Captured()[watermill.InfoLogLevel]
	require.Len(t, infos, 1)
	assert.Equal(t, "dashboard write", infos[0].Msg)
	assert.Equal(t, "dlq-clear", infos[0].Fields["action"])
	assert.Equal(t, "orders", infos[0].Fields["topic"])
	assert.Equal(t, "ops", infos[0].Fields["user"])
	assert.EqualValues(t, 1, infos[0].Fields["done"])
	errs := logger.Captured()[watermill.ErrorLogLevel]
	require.Len(t, errs, 1, "refusals are logged too")
	assert.Equal(t, 403, errs[0].Fields["status"])
	for _, m := range append(infos, errs...) {
		for k, v := range m.Fields {
			text := fmt.Sprint(k, "=", v)
			assert.NotContains(t, text, "pa55-word")
			assert.NotContains(t, text, sess.CSRFToken)
		}
	}
}
