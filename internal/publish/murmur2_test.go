package publish

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestMurmur2KafkaVectors checks Murmur2 against the vectors of Apache Kafka's
// org.apache.kafka.common.utils.UtilsTest.testMurmur2, so keys hash as they do in Kafka.
func TestMurmur2KafkaVectors(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		want  int32
	}{
		{name: "21", input: []byte("21"), want: -973932308},
		{name: "foobar", input: []byte("foobar"), want: -790332482},
		{name: "a-little-bit-long-string", input: []byte("a-little-bit-long-string"), want: -985981536},
		{name: "a-little-bit-longer-string", input: []byte("a-little-bit-longer-string"), want: -1486304829},
		{name: "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", input: []byte("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8"), want: -58897971},
		{name: "bytes abc", input: []byte{'a', 'b', 'c'}, want: 479470107},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Murmur2(tt.input))
		})
	}
}

// TestKafkaPartition checks toPositive(murmur2(key)) % n: the sign bit is masked, not the
// absolute value taken, so a negative hash still lands where Kafka puts it.
func TestKafkaPartition(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		n     int
		want  int
	}{
		// murmur2("foobar") = -790332482; & 0x7fffffff = 1357151166; % 50 = 16.
		{name: "negative hash masked", input: []byte("foobar"), n: 50, want: 16},
		// murmur2("abc") = 479470107 (positive); % 10 = 7.
		{name: "positive hash", input: []byte("abc"), n: 10, want: 7},
		{name: "one partition", input: []byte("anything"), n: 1, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, KafkaPartition(tt.input, tt.n))
		})
	}
}
