package dashboard

import "time"

// JSON conventions of the API (the CLI's --json ones): lower-camel names; durations are
// integer milliseconds in fields ending in "Ms"; times are RFC 3339 UTC strings with
// milliseconds, null when unknown; maps are {} and lists [] when empty, never null.

// jsonTime is a time for JSON: UTC with milliseconds; null when zero.
type jsonTime time.Time

// MarshalJSON writes the time as an RFC 3339 string, or null.
func (t jsonTime) MarshalJSON() ([]byte, error) {
	if time.Time(t).IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + rfc3339(time.Time(t)) + `"`), nil
}

// ms is d in whole milliseconds.
func ms(d time.Duration) int64 { return d.Milliseconds() }

// nonNilMap returns m, or an empty map when m is nil.
func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
