package admin

import "time"

// Every time admin writes goes through one of two helpers, so each format is written once
// (the dashboard's TestTimesAreFormattedInOnePlace checks it): timeText for the texts a
// person reads (String, Error), rfc3339Nano for the text ParseOffset reads back.
//
// textTimeLayout is the CLI's table time, to the second with the zone, here always UTC:
// "2026-12-03 12:00:00 UTC".
const textTimeLayout = "2006-01-02 15:04:05 MST"

// timeText is t for a person: UTC to the second with the zone, as the CLI prints it with
// --utc and the dashboard shows it. A library cannot know the operator's zone.
func timeText(t time.Time) string { return t.UTC().Format(textTimeLayout) }

// rfc3339Nano is t as Offset.String writes it for ParseOffset: RFC 3339 UTC to the
// nanosecond, so a time offset round-trips.
func rfc3339Nano(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
