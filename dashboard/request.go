package dashboard

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// maxBodyBytes bounds a write request's JSON body.
const maxBodyBytes = 1 << 20

// decodeBody reads a write's JSON body into v: at most maxBodyBytes, no unknown fields; an
// empty body leaves v as it is.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return statusErrorf(http.StatusBadRequest, "request body: %v", err)
	}
	return nil
}

// isJSON reports whether the request's Content-Type is application/json.
func isJSON(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// queryInt reads an integer query parameter within [lo, hi]; def when absent.
func queryInt(q map[string][]string, name string, def, lo, hi int) (int, error) {
	vals := q[name]
	if len(vals) == 0 || strings.TrimSpace(vals[0]) == "" {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(vals[0]))
	if err != nil || n < lo || n > hi {
		return 0, badRequestf("query parameter %s must be an integer from %d to %d, got %q", name, lo, hi, vals[0])
	}
	return n, nil
}
