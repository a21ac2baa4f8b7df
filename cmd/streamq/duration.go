package main

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// durationValue is a duration flag that also takes days: "1d", "1d12h", "1.5d", besides
// what time.ParseDuration takes ("90m", "24h").
type durationValue struct{ d *time.Duration }

// durationVar adds a duration flag that takes days (see parseDuration) to fs.
func durationVar(fs *pflag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var(durationValue{p}, name, usage)
}

func (v durationValue) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

func (v durationValue) Type() string { return "duration" }

func (v durationValue) String() string {
	if v.d == nil || *v.d == 0 {
		return "0s"
	}
	return v.d.String()
}

// errDuration explains what a duration flag takes.
var errDuration = errors.New(`not a duration: use a number with a unit, d (days), h, m, s or ms, e.g. 1d, 36h, 90m, 1d12h`)

// parseDuration reads a duration as time.ParseDuration does, with a leading number of days
// ("1d", "2.5d", "1d6h30m"). A day is 24 hours.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	days, rest, ok := strings.Cut(s, "d")
	if !ok {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, errDuration
		}
		return d, nil
	}
	n, err := strconv.ParseFloat(days, 64)
	if err != nil || n < 0 {
		return 0, errDuration
	}
	d := time.Duration(n * float64(24*time.Hour))
	if rest != "" {
		more, err := time.ParseDuration(rest)
		if err != nil || strings.HasPrefix(rest, "-") {
			return 0, errDuration
		}
		d += more
	}
	return d, nil
}

// durationText writes d as a duration flag takes it, shortly: "1d", "1d12h", "90m", "30s".
func durationText(d time.Duration) string {
	const day = 24 * time.Hour
	var b strings.Builder
	if d >= day {
		b.WriteString(strconv.FormatInt(int64(d/day), 10) + "d")
		d %= day
		if d == 0 {
			return b.String()
		}
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	b.WriteString(s)
	return b.String()
}
