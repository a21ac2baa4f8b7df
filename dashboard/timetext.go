package dashboard

import "time"

// Every time the dashboard writes goes through one of three helpers, so each format is
// written once (TestTimesAreFormattedInOnePlace checks it): timeText for the texts a person
// reads, at for a time with its age, rfc3339 (and jsonTime) for API fields. The pages show
// times as timeText does (format.js), so a problem text and a table row about the same
// instant read the same.
const (
	// textTimeLayout is the CLI's table time, to the second with the zone, here always UTC:
	// "2026-12-01 19:55:15 UTC".
	textTimeLayout = "2006-01-02 15:04:05 MST"
	// jsonTimeLayout is the CLI's JSON time, RFC 3339 in UTC with milliseconds:
	// "2026-12-01T19:55:15.123Z".
	jsonTimeLayout = "2006-01-02T15:04:05.000Z07:00"
)

// timeText is t for a person: UTC to the second with the zone, "2026-12-01 19:55:15 UTC".
func timeText(t time.Time) string { return t.UTC().Format(textTimeLayout) }

// at is timeText with t's age at now: "2026-12-01 19:55:15 UTC (3m ago)".
func at(t, now time.Time) string {
	return timeText(t) + " (" + age(max(now.Sub(t), 0)) + " ago)"
}

// rfc3339 is t for an API field (jsonTimeLayout, UTC), "" for the zero time.
func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(jsonTimeLayout)
}
