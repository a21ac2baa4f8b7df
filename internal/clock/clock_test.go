package clock

import (
	"testing"
	"time"
)

func fired(t Timer) bool {
	select {
	case <-t.C():
		return true
	default:
		return false
	}
}

func TestFake(t *testing.T) {
	start := time.Unix(1000, 0)
	tests := []struct {
		name    string
		timer   time.Duration
		advance []time.Duration
		stop    bool
		want    bool
	}{
		{name: "not yet due", timer: time.Second, advance: []time.Duration{999 * time.Millisecond}},
		{name: "due exactly", timer: time.Second, advance: []time.Duration{time.Second}, want: true},
		{name: "due in two steps", timer: time.Second, advance: []time.Duration{500 * time.Millisecond, 500 * time.Millisecond}, want: true},
		{name: "stopped never fires", timer: time.Second, stop: true, advance: []time.Duration{time.Hour}},
		{name: "zero fires at once", timer: 0, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFake(start)
			tm := f.NewTimer(tt.timer)
			if tt.stop {
				tm.Stop()
			}
			for _, d := range tt.advance {
				f.Advance(d)
			}
			if got := fired(tm); got != tt.want {
				t.Fatalf("fired = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFakeResetAndNow(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	tm := f.NewTimer(time.Second)
	f.Advance(time.Second)
	if !fired(tm) {
		t.Fatal("first period did not fire")
	}
	tm.Reset(2 * time.Second)
	f.Advance(time.Second)
	if fired(tm) {
		t.Fatal("fired a second early")
	}
	f.Advance(time.Second)
	if !fired(tm) {
		t.Fatal("reset timer did not fire")
	}
	if got := Since(f, time.Unix(0, 0)); got != 3*time.Second {
		t.Fatalf("Since = %v", got)
	}
	if f.Timers() != 0 {
		t.Fatalf("%d timers left", f.Timers())
	}
}
