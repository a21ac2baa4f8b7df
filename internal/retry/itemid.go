package retry

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync/atomic"
	"time"
)

// lastItemTime is the time part of the last item id of this process, in nanoseconds.
var lastItemTime atomic.Int64

// NewItemID returns the id of a new retry or delay item. Ids sort in the order they were made
// in this process (a fixed-width time that never repeats or goes back, then a random part
// for uniqueness across processes), so items that fall due in the same millisecond (a zset
// orders equal scores by member) are appended in the order they were parked or published.
func NewItemID() string {
	t := time.Now().UnixNano()
	for {
		last := lastItemTime.Load()
		if t <= last {
			t = last + 1
		}
		if lastItemTime.CompareAndSwap(last, t) {
			break
		}
		t = time.Now().UnixNano()
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("%016x-%s", t, hex.EncodeToString(r[:]))
}
