package stream

import (
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestReportedLag(t *testing.T) {
	tail := &Tail{LastID: "5-0", Length: 4}
	tests := []struct {
		name   string
		g      GroupInfo
		t      *Tail
		want   Lag
		wantOK bool
	}{
		{name: "no lag", g: GroupInfo{Lag: 0, LastDelivered: "1-0"}, t: nil, want: Lag{Exact: true}, wantOK: true},
		{name: "unknown", g: GroupInfo{Lag: -1, LastDelivered: "1-0"}, t: tail, wantOK: false},
		{name: "tail not read", g: GroupInfo{Lag: 2, LastDelivered: "1-0"}, t: nil, wantOK: false},
		{name: "delivered up to the last id", g: GroupInfo{Lag: 3, LastDelivered: "5-0"}, t: tail, want: Lag{Exact: true}, wantOK: true},
		{name: "delivered past the last id", g: GroupInfo{Lag: 3, LastDelivered: "6-0"}, t: tail, want: Lag{Exact: true}, wantOK: true},
		{name: "counter behind: more than the stream holds", g: GroupInfo{Lag: 5, LastDelivered: "1-0"}, t: tail, wantOK: false},
		{name: "as many as the stream holds", g: GroupInfo{Lag: 4, LastDelivered: "0-0"}, t: tail, want: Lag{N: 4, Exact: true}, wantOK: true},
		{name: "trusted", g: GroupInfo{Lag: 2, LastDelivered: "3-0"}, t: tail, want: Lag{N: 2, Exact: true}, wantOK: true},
		{name: "empty stream never written", g: GroupInfo{Lag: 1, LastDelivered: "0-0"}, t: TailOf(nil), want: Lag{Exact: true}, wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ReportedLag(tt.g, tt.t)
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("ReportedLag(%+v, %+v) = %+v, %v; want %+v, %v", tt.g, tt.t, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestTailOf(t *testing.T) {
	tests := []struct {
		name string
		info *Info
		want Tail
	}{
		{name: "never written", info: nil, want: Tail{LastID: "0-0"}},
		{name: "last generated, not last entry", info: &Info{Length: 2, LastID: "3-0", LastGeneratedID: "4-0"}, want: Tail{LastID: "4-0", Length: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TailOf(tt.info); *got != tt.want {
				t.Fatalf("TailOf(%+v) = %+v, want %+v", tt.info, *got, tt.want)
			}
		})
	}
}

func TestCountedLag(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		cmd     redis.Cmder
		want    Lag
		wantErr error
	}{
		{name: "XLEN", cmd: redis.NewIntResult(7, nil), want: Lag{N: 7, Exact: true}},
		{name: "XRANGE within the bound", cmd: redis.NewXMessageSliceCmdResult(make([]redis.XMessage, 3), nil), want: Lag{N: 3, Exact: true}},
		{name: "XRANGE at the bound", cmd: redis.NewXMessageSliceCmdResult(make([]redis.XMessage, LagScanLimit), nil), want: Lag{N: LagScanLimit, Exact: true}},
		{name: "XRANGE over the bound", cmd: redis.NewXMessageSliceCmdResult(make([]redis.XMessage, LagScanLimit+1), nil), want: Lag{N: LagScanLimit}},
		{name: "error", cmd: redis.NewIntResult(0, boom), wantErr: boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := countedLag(tt.cmd)
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Fatalf("countedLag = %+v, %v; want %+v, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestCountsWithXLen(t *testing.T) {
	tests := []struct {
		lastDelivered string
		want          bool
	}{
		{"0-0", true},
		{"0", true},
		{"0-1", false},
		{"1700000000000-0", false},
	}
	for _, tt := range tests {
		if got := countsWithXLen(tt.lastDelivered); got != tt.want {
			t.Errorf("countsWithXLen(%q) = %v, want %v", tt.lastDelivered, got, tt.want)
		}
	}
}

func TestGroupsOf(t *testing.T) {
	tests := []struct {
		name string
		in   []redis.XInfoGroup
		want []GroupInfo
	}{
		{name: "no stream", in: nil, want: nil},
		{
			name: "lag unknown stays -1",
			in:   []redis.XInfoGroup{{Name: "g", Consumers: 2, Pending: 3, LastDeliveredID: "4-0", EntriesRead: 5, Lag: -1}},
			want: []GroupInfo{{Name: "g", Consumers: 2, Pending: 3, LastDelivered: "4-0", EntriesRead: 5, Lag: -1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := groupsOf(tt.in)
			if len(got) != len(tt.want) || (got == nil) != (tt.want == nil) {
				t.Fatalf("groupsOf = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("groupsOf[%d] = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}
