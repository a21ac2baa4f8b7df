package member

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseMember(t *testing.T) {
	tests := []struct {
		name  string
		input string // caps
		want  Member
	}{
		{name: "all fields", input: "4,1,2", want: Member{Name: "m", Modulo: 4, Remainder: 1, MaxLeased: 2}},
		{name: "zeros", input: "0,0,0", want: Member{Name: "m"}},
		{name: "empty", input: "", want: Member{Name: "m"}},
		{name: "not numbers", input: "x,y,z", want: Member{Name: "m"}},
		{name: "negative reads zero", input: "-1,-2,-3", want: Member{Name: "m"}},
		{name: "one bad field", input: "2,oops,3", want: Member{Name: "m", Modulo: 2, MaxLeased: 3}},
		{name: "too few fields", input: "2,1", want: Member{Name: "m", Modulo: 2, Remainder: 1}},
		{name: "too many fields", input: "2,1,3,9", want: Member{Name: "m", Modulo: 2, Remainder: 1, MaxLeased: 3}},
		{name: "spaces are bad", input: " 2, 1, 3", want: Member{Name: "m"}},
		{name: "float", input: "2.5,1,1", want: Member{Name: "m", Remainder: 1, MaxLeased: 1}},
		{name: "full member", input: "2,1,-1", want: Member{Name: "m", Modulo: 2, Remainder: 1, MaxLeased: NoLeases}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ParseMember("m", tt.input))
		})
	}
}

func TestParseMemberRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		input Member
	}{
		{name: "plain", input: Member{Name: "a"}},
		{name: "filter", input: Member{Name: "b", Modulo: 3, Remainder: 2}},
		{name: "cap", input: Member{Name: "c", MaxLeased: 7}},
		{name: "full", input: Member{Name: "d", Modulo: 2, MaxLeased: NoLeases}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.input, ParseMember(tt.input.Name, tt.input.caps()))
		})
	}
}

func TestMemberEligible(t *testing.T) {
	tests := []struct {
		name  string
		input Member
		want  []int // eligible among 0..5
	}{
		{name: "no filter", input: Member{}, want: []int{0, 1, 2, 3, 4, 5}},
		{name: "odd", input: Member{Modulo: 2, Remainder: 1}, want: []int{1, 3, 5}},
		{name: "mod 3 rem 0", input: Member{Modulo: 3}, want: []int{0, 3}},
		{name: "modulo 1", input: Member{Modulo: 1}, want: []int{0, 1, 2, 3, 4, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int
			for p := range 6 {
				if tt.input.Eligible(p) {
					got = append(got, p)
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
