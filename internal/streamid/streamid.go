// Package streamid parses, orders and builds Redis stream ids ("ms-seq"): the one place
// streamq, admin and the CLI compare ids numerically rather than as strings.
package streamid

import (
	"strconv"
	"strings"
	"time"
)

// Parse splits a stream id "ms-seq" (or "ms") into its parts; ok is false when it is not one.
func Parse(id string) (ms, seq uint64, ok bool) {
	msPart, seqPart, hasSeq := strings.Cut(id, "-")
	ms, err := strconv.ParseUint(msPart, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if hasSeq {
		if seq, err = strconv.ParseUint(seqPart, 10, 64); err != nil {
			return 0, 0, false
		}
	}
	return ms, seq, true
}

// Less orders stream ids numerically (unparseable ids sort first).
func Less(a, b string) bool {
	am, as, _ := Parse(a)
	bm, bs, _ := Parse(b)
	return am < bm || (am == bm && as < bs)
}

// Time is the time of an id's milliseconds part; the zero Time when id is not a stream id.
func Time(id string) time.Time {
	ms, _, ok := Parse(id)
	if !ok {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms))
}

// Next is the smallest id after id.
func Next(id string) string {
	ms, seq, _ := Parse(id)
	return strconv.FormatUint(ms, 10) + "-" + strconv.FormatUint(seq+1, 10)
}

// Min is the smallest id at or after t: entries below it are older than t.
func Min(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) + "-0" }

// keyDigits is the width of each part of a Key: the digits of the largest uint64.
const keyDigits = 20

// Key is id as a fixed-width string ("ms-seq", each part zero-padded to 20 digits) that sorts
// as the id does, for lexicographic zsets of ids (ZLEXCOUNT over a range of ids); the Lua
// scripts that write such zsets pad the same way. An id that does not parse keys as 0-0.
func Key(id string) string {
	ms, seq, _ := Parse(id)
	return pad(strconv.FormatUint(ms, 10)) + "-" + pad(strconv.FormatUint(seq, 10))
}

func pad(digits string) string { return strings.Repeat("0", keyDigits-len(digits)) + digits }
