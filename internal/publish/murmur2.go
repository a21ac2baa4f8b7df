package publish

// Murmur2 is the 32-bit MurmurHash2 used by Kafka's default partitioner (seed 0x9747b28c), so a
// key maps to the same partition number here as in a Kafka topic with the same count.
func Murmur2(data []byte) int32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
		r           = 24
	)
	length := len(data)
	h := seed ^ uint32(length)
	n := length / 4
	for i := 0; i < n; i++ {
		k := uint32(data[i*4]) | uint32(data[i*4+1])<<8 | uint32(data[i*4+2])<<16 | uint32(data[i*4+3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	tail := data[n*4:]
	switch len(tail) {
	case 3:
		h ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(tail[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

// KafkaPartition maps key to a partition in [0, n) exactly as Kafka's default partitioner does:
// toPositive(murmur2(key)) % n.
func KafkaPartition(key []byte, n int) int {
	return int(uint32(Murmur2(key))&0x7fffffff) % n
}
