package dashboard

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// Authentication modes (Options.authMode, reported by api/session).
const (
	authNone  = "none"
	authToken = "token"
	authBasic = "basic"
)

// authenticator checks the credentials Options asks for. Secrets are kept as SHA-256
// digests and compared in constant time, so neither their content nor their length leaks
// through timing.
type authenticator struct {
	mode       string
	token      [sha256.Size]byte
	user, pass [sha256.Size]byte
}

func newAuthenticator(o Options) *authenticator {
	return &authenticator{
		mode:  o.authMode(),
		token: sha256.Sum256([]byte(o.Token)),
		user:  sha256.Sum256([]byte(o.BasicAuthUser)),
		pass:  sha256.Sum256([]byte(o.BasicAuthPassword)),
	}
}

// wrap requires credentials: with a token, on the API (the pages themselves hold no data and
// ask for the token); with basic auth, on everything (the browser asks for it).
func (a *authenticator) wrap(next http.Handler) http.Handler {
	if a.mode == authNone {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.mode == authToken && !strings.HasPrefix(r.URL.Path, "/api/") {
			next.ServeHTTP(w, r)
			return
		}
		if !a.ok(r) {
			a.challenge(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (a *authenticator) ok(r *http.Request) bool {
	if a.mode == authBasic {
		user, pass, ok := r.BasicAuth()
		u := subtle.ConstantTimeCompare(digest(user), a.user[:])
		p := subtle.ConstantTimeCompare(digest(pass), a.pass[:])
		return ok && u&p == 1
	}
	tok, ok := bearer(r.Header.Get("Authorization"))
	return ok && subtle.ConstantTimeCompare(digest(tok), a.token[:]) == 1
}

func (a *authenticator) challenge(w http.ResponseWriter) {
	if a.mode == authBasic {
		w.Header().Set("WWW-Authenticate", `Basic realm="streamq", charset="UTF-8"`)
	} else {
		w.Header().Set("WWW-Authenticate", `Bearer realm="streamq"`)
	}
	writeError(w, errUnauthorized)
}

// userName is the authenticated basic-auth user name, for the write log ("" otherwise).
func (a *authenticator) userName(r *http.Request) string {
	if a.mode != authBasic {
		return ""
	}
	u, _, _ := r.BasicAuth()
	return u
}

// bearer returns the token of an "Authorization: Bearer <token>" header.
func bearer(header string) (string, bool) {
	scheme, tok, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

func digest(s string) []byte {
	d := sha256.Sum256([]byte(s))
	return d[:]
}
