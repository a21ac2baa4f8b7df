package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"
)

// The JSON output is the admin package's results with lower-camel field names ("firstId",
// "dlqLength"), through the view structs of each command file. Conventions:
//   - durations are integer milliseconds in fields ending in "Ms" ("idleMs", "timeLagMs");
//   - times are RFC 3339 strings in UTC with milliseconds, null when unknown;
//   - payloads are strings: the bytes as text when they are valid UTF-8 ("payloadEncoding":
//     "utf8"), else base64 ("payloadEncoding": "base64"); never truncated;
//   - maps (metadata, fields) are objects, {} when empty; lists are [], never null.

// previewLen is how many characters of a payload or metadata a table shows.
const previewLen = 120

// printJSON writes v as indented JSON followed by a newline.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// printJSONLine writes v as one line of JSON (for streams of records, as tail prints).
func printJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// table writes aligned columns; call flush when done.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	if len(header) > 0 {
		t.row(toAny(header)...)
	}
	return t
}

// row writes one row; each cell is formatted with %v, tabs and newlines replaced.
func (t *table) row(cells ...any) {
	s := make([]string, len(cells))
	for i, c := range cells {
		s[i] = cellText(fmt.Sprint(c))
	}
	fmt.Fprintln(t.tw, strings.Join(s, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// cellText makes s safe for one table cell: control characters become spaces.
func cellText(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || (r < 0x20 && r != 0) {
			return ' '
		}
		return r
	}, s)
}

// payloadText returns a payload as JSON shows it: the text when it is valid UTF-8, else
// base64; and the encoding used.
func payloadText(b []byte) (text, encoding string) {
	if utf8.Valid(b) {
		return string(b), "utf8"
	}
	return base64.StdEncoding.EncodeToString(b), "base64"
}

// payloadPreview is a payload as a table shows it: text, or "base64:..." for binary,
// truncated to previewLen characters.
func payloadPreview(b []byte) string {
	text, enc := payloadText(b)
	if enc == "base64" {
		text = "base64:" + text
	}
	return truncate(text, previewLen)
}

// truncate shortens s to at most n runes, ending with "…" when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// metadataPreview renders metadata as sorted k=v pairs, truncated for a table.
func metadataPreview(md map[string]string) string {
	if len(md) == 0 {
		return "-"
	}
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(md)) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k + "=" + md[k])
	}
	return truncate(b.String(), previewLen)
}

// orDash returns s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ms is a duration in whole milliseconds, for JSON.
func ms(d time.Duration) int64 { return d.Milliseconds() }

// human renders a duration for a table: "-" for zero, else rounded to ms below a minute and
// to seconds above.
func human(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Minute:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// jsonTime is a time for JSON: UTC with milliseconds; null when zero.
type jsonTime time.Time

func (t jsonTime) MarshalJSON() ([]byte, error) {
	if time.Time(t).IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + time.Time(t).UTC().Format("2006-01-02T15:04:05.000Z07:00") + `"`), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (t *jsonTime) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = jsonTime{}
		return nil
	}
	var v time.Time
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*t = jsonTime(v)
	return nil
}

// tableTime renders a time for a table, local time with milliseconds; "-" when zero.
func tableTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05.000")
}

// nonNilMap returns m, or an empty map when m is nil, so JSON shows {}.
func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// nonNil returns s, or an empty slice when s is nil, so JSON shows [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// plural returns "1 entry" / "2 entries" style counts.
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
