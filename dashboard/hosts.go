package dashboard

import (
	"net"
	"net/http"
	"strings"
)

// allowHosts refuses requests whose Host header is not in allowed (when allowed is not
// empty): a page on another name that resolves to a loopback address (DNS rebinding) then
// cannot read or write through the dashboard.
func allowHosts(allowed []string, next http.Handler) http.Handler {
	if len(allowed) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(allowed, r.Host) {
			writeError(w, errHostNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostAllowed reports whether host (host or host:port) matches an entry of allowed: the
// same host:port, or an entry without port naming the host.
func hostAllowed(allowed []string, host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.Trim(name, "[]")
	for _, a := range allowed {
		if strings.EqualFold(a, host) || strings.EqualFold(strings.Trim(a, "[]"), name) {
			return true
		}
	}
	return false
}
