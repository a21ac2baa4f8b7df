package admin

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/streamq-dev/streamq/internal/streamid"
)

type offsetKind int

const (
	offsetBeginning offsetKind = iota
	offsetLatest
	offsetID
	offsetTime
)

// maxSeq is the largest sequence number of a stream id.
const maxSeq = "18446744073709551615"

// Offset is where ResetGroupOffset moves a group: the beginning, the end, after a stream id,
// or the first entry at or after a time. The zero Offset is the beginning.
type Offset struct {
	kind offsetKind
	id   string
	t    time.Time
}

// OffsetBeginning re-delivers every entry still in the stream (last-delivered-id 0-0).
func OffsetBeginning() Offset { return Offset{kind: offsetBeginning} }

// OffsetLatest skips every entry in the stream now: only new entries are delivered ("$").
func OffsetLatest() Offset { return Offset{kind: offsetLatest} }

// OffsetID sets the last-delivered id: delivery resumes with the first entry after id.
func OffsetID(id string) Offset { return Offset{kind: offsetID, id: id} }

// OffsetTime resumes delivery with the first entry at or after t (millisecond precision).
func OffsetTime(t time.Time) Offset { return Offset{kind: offsetTime, t: t} }

// ParseOffset reads an offset as an operator types it:
//   - "0", "0-0", "beginning", "earliest": OffsetBeginning
//   - "$", "latest", "end": OffsetLatest
//   - a stream id, "1700000000000-4" or "1700000000000": OffsetID
//   - an RFC 3339 time, "2024-05-01T12:00:00Z", or unix milliseconds, "@1700000000000": OffsetTime
//
// Anything else is ErrInvalidArgument naming the input.
func ParseOffset(s string) (Offset, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "0", "0-0", "beginning", "earliest":
		return OffsetBeginning(), nil
	case "$", "latest", "end":
		return OffsetLatest(), nil
	}
	if ms, ok := strings.CutPrefix(s, "@"); ok {
		if v, err := strconv.ParseInt(ms, 10, 64); err == nil {
			return OffsetTime(time.UnixMilli(v)), nil
		}
	} else if _, _, ok := streamid.Parse(s); ok {
		return OffsetID(s), nil
	} else if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return OffsetTime(t), nil
	}
	return Offset{}, fmt.Errorf("%w: offset %q: want beginning, latest, a stream id (1700000000000-0), an RFC 3339 time or @unix-milliseconds", ErrInvalidArgument, s)
}

// String returns the offset in a form ParseOffset reads back.
func (o Offset) String() string {
	switch o.kind {
	case offsetLatest:
		return "latest"
	case offsetID:
		return o.id
	case offsetTime:
		return rfc3339Nano(o.t)
	}
	return "beginning"
}

// groupID is the last-delivered-id XGROUP SETID / CREATE take for o.
func (o Offset) groupID() (string, error) {
	switch o.kind {
	case offsetLatest:
		return "$", nil
	case offsetID:
		if _, _, ok := streamid.Parse(o.id); !ok {
			return "", fmt.Errorf("%w: offset %q is not a stream id", ErrInvalidArgument, o.id)
		}
		return o.id, nil
	case offsetTime:
		return timeID(o.t), nil
	}
	return "0-0", nil
}

// resumes says where delivery resumes after a reset to o, whose last-delivered-id is id:
// the id itself is shown only when the user gave one (a time's is "<ms-1>-<max seq>").
func (o Offset) resumes(id string) string {
	switch o.kind {
	case offsetTime:
		return "delivery resumes at the first entry at or after it"
	case offsetLatest:
		return "delivery resumes with the entries appended from now on"
	case offsetBeginning:
		return "delivery resumes at the first entry"
	}
	return "delivery resumes after entry " + id
}

// timeID is the greatest stream id strictly before t's millisecond, so the next delivery is
// the first entry at or after t.
func timeID(t time.Time) string {
	ms := t.UnixMilli()
	if ms <= 0 {
		return "0-0"
	}
	return strconv.FormatInt(ms-1, 10) + "-" + maxSeq
}
