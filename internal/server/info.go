package server

import (
	"fmt"
	"strings"
)

// NoEviction is the only maxmemory-policy under which Redis never removes a key by itself.
const NoEviction = "noeviction"

// Facts is what INFO server and INFO memory said of one server. An empty field was not
// reported (a proxy, an emulation, a section the server refused).
type Facts struct {
	Version         string // redis_version
	MaxmemoryPolicy string // maxmemory_policy
	UsedMemory      int64  // used_memory, bytes
	MaxMemory       int64  // maxmemory, bytes; 0: no limit (or not reported)
	HasMaxMemory    bool   // maxmemory was reported
}

// ParseInfo reads the fields streamq checks from INFO replies: "field:value" lines, "#"
// section headers, CRLF or LF line ends, any sections in any order.
func ParseInfo(replies ...string) Facts {
	var f Facts
	for _, reply := range replies {
		for _, line := range strings.Split(reply, "\n") {
			key, value, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok || strings.HasPrefix(key, "#") {
				continue
			}
			switch key {
			case "redis_version":
				f.Version = value
			case "maxmemory_policy":
				f.MaxmemoryPolicy = value
			case "used_memory":
				f.UsedMemory = parseBytes(value)
			case "maxmemory":
				f.MaxMemory, f.HasMaxMemory = parseBytes(value), true
			}
		}
	}
	return f
}

// Finding is the judgement of one server's Facts.
type Finding struct {
	// Unsupported wraps ErrUnsupported when the server is older than MinVersion; nil otherwise.
	Unsupported error
	// Evicting is true when the maxmemory-policy is known and is not noeviction.
	Evicting bool
	// Unknown lists what could not be checked: "version", "maxmemory-policy".
	Unknown []string
	// NoMemoryLimit is true when the server reported maxmemory 0: Redis then never refuses a
	// write, and the kernel ends the server when the machine runs out of memory.
	NoMemoryLimit bool
}

// Judge checks the facts of the server at addr ("" when unknown) against what streamq needs.
// A version that is missing or does not parse is not checked, never refused.
func Judge(addr string, f Facts) Finding {
	var out Finding
	if v, err := ParseVersion(f.Version); f.Version == "" || err != nil {
		out.Unknown = append(out.Unknown, "version")
	} else if v.Less(MinVersion) {
		out.Unsupported = fmt.Errorf("%w: Redis %s%s, streamq needs Redis %s or later "+
			"(XAUTOCLAIM dropping deleted entries from the pending list, XINFO GROUPS lag)",
			ErrUnsupported, f.Version, at(addr), MinVersion)
	}
	out.NoMemoryLimit = f.HasMaxMemory && f.MaxMemory == 0
	switch f.MaxmemoryPolicy {
	case "":
		out.Unknown = append(out.Unknown, "maxmemory-policy")
	case NoEviction:
	default:
		out.Evicting = true
	}
	return out
}

func at(addr string) string {
	if addr == "" {
		return ""
	}
	return " at " + addr
}
