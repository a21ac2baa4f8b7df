package main

import (
	"math"
	"strconv"

	"github.com/streamq-dev/streamq/internal/streamid"
)

// shownID is a group position as users write ids: a reset to a time leaves the greatest id
// before the time's millisecond ("<ms-1>-18446744073709551615"), shown as "before <ms>-0"
// (the id delivery resumes at or after).
func shownID(id string) string {
	ms, seq, ok := streamid.Parse(id)
	if !ok || seq != math.MaxUint64 {
		return id
	}
	return "before " + strconv.FormatUint(ms+1, 10) + "-0"
}
