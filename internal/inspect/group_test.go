package inspect

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestLiveMembers(t *testing.T) {
	now := time.UnixMilli(1_000)
	boom := errors.New("boom")
	tests := []struct {
		name    string
		members []redis.Z
		zErr    error
		timeErr error
		want    []string
		wantErr error
	}{
		{name: "none", want: []string{}},
		{
			name:    "expired and live, sorted",
			members: []redis.Z{{Member: "c", Score: 2_000}, {Member: "a", Score: 999}, {Member: "b", Score: 1_001}, {Member: "d", Score: 1_000}},
			want:    []string{"b", "c"},
		},
		{name: "members unread", zErr: boom, wantErr: boom},
		{name: "time unread", timeErr: boom, wantErr: boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := liveMembers(redis.NewZSliceCmdResult(tt.members, tt.zErr), redis.NewTimeCmdResult(now, tt.timeErr))
			if !errors.Is(err, tt.wantErr) || !slices.Equal(got, tt.want) || (err == nil && got == nil) {
				t.Fatalf("liveMembers = %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestFirstErr(t *testing.T) {
	a, b := errors.New("a"), errors.New("b")
	tests := []struct {
		name string
		errs []error
		want error
	}{
		{name: "none", errs: []error{nil, nil}, want: nil},
		{name: "second", errs: []error{nil, b}, want: b},
		{name: "first of two", errs: []error{a, b}, want: a},
	}
	for _, tt := range tests {
		if got := firstErr(tt.errs...); !errors.Is(got, tt.want) || (got == nil) != (tt.want == nil) {
			t.Errorf("%s: firstErr = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestHeartbeats(t *testing.T) {
	got := heartbeats(redis.NewZSliceCmdResult([]redis.Z{{Member: "b", Score: 2_000}, {Member: "a", Score: 999}}, nil))
	want := []Heartbeat{{Member: "a", Expires: time.UnixMilli(999)}, {Member: "b", Expires: time.UnixMilli(2_000)}}
	if !slices.Equal(got, want) {
		t.Fatalf("heartbeats = %v, want %v", got, want)
	}
	if got := heartbeats(redis.NewZSliceCmdResult(nil, nil)); got == nil || len(got) != 0 {
		t.Fatalf("heartbeats of none = %v, want empty", got)
	}
}
