package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
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

// tableWidth is the width default (narrow) tables fit when stdout is no terminal: 80
// columns, whatever the terminal the command was started from, so that output piped or
// redirected keeps one layout.
const tableWidth = 80

// minWidth is the narrowest terminal tables are fitted to; below it they fit tableWidth.
const minWidth = 40

// width is the width default tables fit: the terminal's columns when stdout is one (as
// kubectl and gh do), else tableWidth.
func (a *app) width() int {
	if f, ok := a.stdout.(*os.File); ok {
		if w := termWidth(f.Fd()); w >= minWidth {
			return w
		}
	}
	return tableWidth
}

// fitWidth is the width a table fits: the terminal's (width), or 0, no limit, with -o wide,
// which cuts nothing.
func (a *app) fitWidth() int {
	if a.wide {
		return 0
	}
	return a.width()
}

// nameWidth is how many runes a name (a group) keeps in a table fitted to width where another
// column is the flexible one (a reason): a sixth of the width, at least minFlex.
func nameWidth(width int) int {
	return max(width/6, minFlex)
}

// proseName is a name as a sentence beside a table fitted to width shows it: cut with "…" to
// a third of the width (at least minFlex runes); whole when width is 0 (-o wide).
func proseName(name string, width int) string {
	if width <= 0 {
		return name
	}
	return truncate(name, max(width/3, minFlex))
}

// table writes aligned columns; call flush when done. Rows are kept until flush, so a table
// made to fit (fit) can cut its flexible column to the width the others leave.
type table struct {
	w     io.Writer
	rows  [][]string
	width int  // 0: no limit
	flex  int  // the column cut to fit width (-1: none)
	wrap  bool // wrap the flexible column onto more lines instead of cutting it
}

func newTable(w io.Writer, header ...string) *table {
	t := &table{w: w, flex: -1}
	if len(header) > 0 {
		t.row(toAny(header)...)
	}
	return t
}

// fit makes the table fit width columns by cutting the cells of column flex (with "…") to
// what the other columns leave, at least minFlex runes.
func (t *table) fit(width, flex int) *table {
	t.width, t.flex = width, flex
	return t
}

// fitWrapped is fit, wrapping the flexible column's long cells onto continuation lines (the
// other cells empty there) instead of cutting them: for key-value views.
func (t *table) fitWrapped(width, flex int) *table {
	t.width, t.flex, t.wrap = width, flex, true
	return t
}

// row adds one row; each cell is formatted with %v, tabs and newlines replaced.
func (t *table) row(cells ...any) {
	s := make([]string, len(cells))
	for i, c := range cells {
		s[i] = cellText(fmt.Sprint(c))
	}
	t.rows = append(t.rows, s)
}

// minFlex is the fewest runes a flexible column is cut to.
const minFlex = 12

// flush writes the rows aligned, two spaces between columns.
func (t *table) flush() error {
	if t.width > 0 && t.flex >= 0 {
		t.cut()
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var out strings.Builder
	for line := range strings.Lines(b.String()) { // empty last cells leave padding behind
		out.WriteString(strings.TrimRight(line, " \n") + "\n")
	}
	_, err := io.WriteString(t.w, out.String())
	return err
}

// cut shortens the flexible column's cells to the width the other columns leave.
func (t *table) cut() {
	widths := map[int]int{}
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	used := 0
	for i, w := range widths {
		if i != t.flex {
			used += w + 2
		}
	}
	budget := max(t.width-used, minFlex)
	var out [][]string
	for _, r := range t.rows {
		if t.flex >= len(r) {
			out = append(out, r)
			continue
		}
		if !t.wrap {
			r[t.flex] = truncate(r[t.flex], budget)
			out = append(out, r)
			continue
		}
		for i, part := range wrapText(r[t.flex], budget) {
			line := r
			if i > 0 {
				line = make([]string, len(r))
			}
			line[t.flex] = part
			out = append(out, line)
		}
	}
	t.rows = out
}

// wrapText splits s into lines of at most width runes, at spaces where it can.
func wrapText(s string, width int) []string {
	var lines []string
	for utf8.RuneCountInString(s) > width {
		r := []rune(s)
		cut := width
		for i := width; i > width/2; i-- {
			if r[i] == ' ' {
				cut = i
				break
			}
		}
		lines = append(lines, strings.TrimRight(string(r[:cut]), " "))
		s = strings.TrimLeft(string(r[cut:]), " ")
	}
	return append(lines, s)
}

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

// Every time the CLI prints goes through one of three helpers, so each format is written
// once: timeText for tables and messages, jsonTime for JSON time fields, rfc3339 for JSON
// string fields that are absent when the time is zero. Durations go through human,
// agoText and durationText.
const (
	// jsonTimeLayout is RFC 3339 in UTC with milliseconds: "2026-12-03T12:00:00.000Z".
	jsonTimeLayout = "2006-01-02T15:04:05.000Z07:00"
	// textTimeLayout and wideTimeLayout are a table's times, to the second and (with -o
	// wide) to the millisecond, with the zone.
	textTimeLayout = "2006-01-02 15:04:05 MST"
	wideTimeLayout = "2006-01-02 15:04:05.000 MST"
)

// jsonTime is a time for JSON: UTC with milliseconds; null when zero.
type jsonTime time.Time

func (t jsonTime) MarshalJSON() ([]byte, error) {
	if time.Time(t).IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + rfc3339(time.Time(t)) + `"`), nil
}

// rfc3339 is t as JSON shows it (jsonTimeLayout, UTC), "" for the zero time: for string
// fields with omitempty.
func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(jsonTimeLayout)
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

// timeText renders a time for a table with its zone: local time unless --utc, to the second
// (to the millisecond with -o wide); "-" when zero.
func (a *app) timeText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	t = t.Local()
	if a.utc {
		t = t.UTC()
	}
	if a.wide {
		return t.Format(wideTimeLayout)
	}
	return t.Format(textTimeLayout)
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
