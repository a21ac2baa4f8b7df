package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
)

// httpError is an error with the HTTP status it answers with.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func statusErrorf(status int, format string, args ...any) error {
	return &httpError{status: status, msg: fmt.Sprintf(format, args...)}
}

// Refusals of the security layers.
var (
	errUnauthorized   = statusErrorf(http.StatusUnauthorized, "authentication required")
	errHostNotAllowed = statusErrorf(http.StatusForbidden, "host not allowed")
	errReadOnly       = statusErrorf(http.StatusForbidden, "the dashboard is read-only: writes are disabled (Options.AllowWrites, streamq ui --allow-writes)")
	errCrossSite      = statusErrorf(http.StatusForbidden, "cross-site request refused")
	errCSRF           = statusErrorf(http.StatusForbidden, "missing or wrong "+csrfHeader+" header")
	errNotJSON        = statusErrorf(http.StatusUnsupportedMediaType, "a write needs Content-Type: application/json")
)

// apiFunc serves one API endpoint: the value to send as JSON, or an error.
type apiFunc func(r *http.Request) (any, error)

// apiHandler runs fn and writes its result or error as JSON.
func apiHandler(fn apiFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, err := fn(r)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, v)
	})
}

// writeJSON writes v, never to be cached. The encoder escapes <, > and & in strings, so stored data can never
// read as markup even if a client mistook the response for HTML.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// errorView is the body of every API error.
type errorView struct {
	Error string `json:"error"`
}

// writeError answers err with its status: the security layers' own, 404 for admin's
// not-found errors, 400 for invalid arguments, 503 for a write refused because Redis is full,
// else 500.
func writeError(w http.ResponseWriter, err error) {
	writeJSON(w, statusOf(err), errorView{Error: err.Error()})
}

func statusOf(err error) int {
	var he *httpError
	switch {
	case errors.As(err, &he):
		return he.status
	case errors.Is(err, admin.ErrTopicNotFound), errors.Is(err, admin.ErrGroupNotFound),
		errors.Is(err, admin.ErrEntryNotFound):
		return http.StatusNotFound
	case errors.Is(err, admin.ErrInvalidArgument):
		return http.StatusBadRequest
	case errors.Is(err, streamq.ErrRedisFull):
		return http.StatusServiceUnavailable // a write Redis refused at maxmemory: it goes through once memory is freed
	}
	return http.StatusInternalServerError
}

// badRequestf is a 400 error.
func badRequestf(format string, args ...any) error {
	return statusErrorf(http.StatusBadRequest, format, args...)
}
