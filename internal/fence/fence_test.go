package fence

import (
	"errors"
	"testing"
)

func TestCheck(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		res     any
		err     error
		want    any
		wantErr error
	}{
		{name: "an id passes", res: "1-1", want: "1-1"},
		{name: "a count passes", res: int64(3), want: int64(3)},
		{name: "zero passes", res: int64(0), want: int64(0)},
		{name: "lost is ErrLeaseLost", res: int64(Lost), wantErr: ErrLeaseLost},
		{name: "a list passes", res: []any{int64(-1)}, want: []any{int64(-1)}},
		{name: "a Redis error is wrapped", err: boom, wantErr: boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Check("step", tt.res, tt.err)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if l, ok := tt.want.([]any); ok {
				if g, _ := got.([]any); len(g) != len(l) {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
				return
			}
			if got != tt.want {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}
