// Package server holds what streamq asks of the Redis servers behind a client, apart from the
// data: their version and eviction policy (INFO server, INFO memory), read once per client and
// judged by pure functions, and the WAIT that makes a pipeline of writes durable on replicas.
package server

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrUnsupported reports a Redis server older than MinVersion.
var ErrUnsupported = errors.New("unsupported Redis server")

// MinVersion is the oldest Redis streamq supports: 7.0.
//
// Redis 6.2 has the commands streamq sends (XAUTOCLAIM, XTRIM and XADD with MINID and LIMIT,
// XPENDING IDLE), but not all of what it relies on:
//
//   - Since 7.0, XAUTOCLAIM and XCLAIM remove from the pending list the entries that were
//     deleted from the stream (XAUTOCLAIM reports them in a third reply element). The pending
//     scan and the takeover of a crashed member's entries count on it: entries are deleted
//     while pending by AckDeleteImmediate, AckDeleteAllGroups, TrimHard and admin deletes. On
//     6.2 such entries would stay pending for ever and come back at every claim.
//   - XINFO GROUPS "entries-read" and "lag" and XINFO STREAM "entries-added" are 7.0. The
//     admin package, the CLI, the dashboard and the Prometheus lag collector read them, and
//     go-redis reads a missing field as 0: on 6.2 every group would report lag 0, "caught
//     up", which is wrong rather than degraded.
//   - The tests run on Redis 7.
var MinVersion = Version{Major: 7, Minor: 0, Patch: 0}

// Version is a Redis version, as INFO server's redis_version reports it.
type Version struct {
	Major, Minor, Patch int
}

// ParseVersion parses "MAJOR.MINOR.PATCH"; missing parts are 0 and a suffix after a number
// ("7.2.0-rc1") is ignored.
func ParseVersion(s string) (Version, error) {
	parts := strings.SplitN(strings.TrimSpace(s), ".", 3)
	var nums [3]int
	for i, p := range parts {
		end := 0
		for end < len(p) && p[end] >= '0' && p[end] <= '9' {
			end++
		}
		n, err := strconv.Atoi(p[:end])
		if err != nil {
			return Version{}, fmt.Errorf("parse Redis version %q: not MAJOR.MINOR.PATCH", s)
		}
		nums[i] = n
		if end < len(p) {
			break // a suffix ends the version
		}
	}
	return Version{Major: nums[0], Minor: nums[1], Patch: nums[2]}, nil
}

// Less reports whether v is older than o.
func (v Version) Less(o Version) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor < o.Minor
	}
	return v.Patch < o.Patch
}

func (v Version) String() string {
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}
