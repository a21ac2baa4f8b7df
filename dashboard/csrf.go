package dashboard

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"

	"github.com/ThreeDotsLabs/watermill"
)

// csrfHeader carries the per-handler token on every write; the page reads the token from
// GET api/session, which another origin cannot read.
const csrfHeader = "X-CSRF-Token"

// writeFunc performs one write; it returns the result and the log fields that describe
// what was asked (topic, partition, ids, ...), never a secret.
type writeFunc func(r *http.Request) (any, watermill.LogFields, error)

// write guards and logs a write endpoint: refused in read-only mode, across sites, without
// the CSRF header or a JSON body; every attempt that passes the guard is logged with its
// outcome, refusals are logged too.
func (h *Handler) write(action string, fn writeFunc) apiFunc {
	return func(r *http.Request) (any, error) {
		if err := h.checkWrite(r); err != nil {
			h.logWrite(r, action, watermill.LogFields{"topic": r.PathValue("topic")}, err)
			return nil, err
		}
		v, fields, err := fn(r)
		h.logWrite(r, action, fields, err)
		return v, err
	}
}

// checkWrite runs the write guards in order.
func (h *Handler) checkWrite(r *http.Request) error {
	switch {
	case !h.opts.AllowWrites:
		return errReadOnly
	case crossSite(r):
		return errCrossSite
	case !h.validCSRF(r.Header.Get(csrfHeader)):
		return errCSRF
	case !isJSON(r):
		return errNotJSON
	}
	return nil
}

func (h *Handler) validCSRF(got string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(h.csrf)) == 1
}

// crossSite reports a request a browser marks as coming from another origin, as Go 1.25's
// http.CrossOriginProtection decides: Sec-Fetch-Site, which every current browser sends,
// must be same-origin (or none: typed by the user); without it, an Origin header must name
// the request's host. A request with neither is not a browser's cross-origin request.
// Sec-Fetch-Site wins over Origin, so a proxy that rewrites Host does not break writes.
func crossSite(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site != "same-origin" && site != "none"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	return err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host)
}

// logWrite logs one write attempt with its outcome. Headers are never logged (they hold
// the token, the basic credentials and the CSRF token).
func (h *Handler) logWrite(r *http.Request, action string, fields watermill.LogFields, err error) {
	f := watermill.LogFields{"action": action, "remote": r.RemoteAddr}.Add(fields)
	if user := h.auth.userName(r); user != "" {
		f["user"] = user
	}
	if err != nil {
		f["status"] = statusOf(err)
		h.opts.Logger.Error("dashboard write failed", err, f)
		return
	}
	h.opts.Logger.Info("dashboard write", f)
}
