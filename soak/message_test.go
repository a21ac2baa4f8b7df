//go:build soak

package soak

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
)

// Metadata the publishers set on every message.
const (
	mdKey  = "soak-key"
	mdSeq  = "soak-seq"
	mdSum  = "soak-sum"  // checksum of the payload
	mdSize = "soak-size" // payload length
)

// checksum is the hex SHA-256 of a payload (the first 16 bytes).
func checksum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:16])
}

// newMessage builds message seq of key with a payload of random size and bytes.
func newMessage(rng *rand.Rand, key string, seq int64) *message.Message {
	size := smallMin + rng.IntN(smallMax-smallMin)
	if rng.IntN(100) < largePercent {
		size = largeMin + rng.IntN(largeMax-largeMin)
	}
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = byte(rng.Uint32())
	}
	m := message.NewMessage(watermill.NewUUID(), payload)
	m.Metadata.Set(streamq.PartitionKeyMetadata, key)
	m.Metadata.Set(mdKey, key)
	m.Metadata.Set(mdSeq, strconv.FormatInt(seq, 10))
	m.Metadata.Set(mdSum, checksum(payload))
	m.Metadata.Set(mdSize, strconv.Itoa(size))
	return m
}

// verifyPayload reports why a delivered message's payload does not match what was
// published ("" when it does).
func verifyPayload(m *message.Message) string {
	want, err := strconv.Atoi(m.Metadata.Get(mdSize))
	if err != nil {
		return "no size metadata"
	}
	if len(m.Payload) != want {
		return fmt.Sprintf("payload is %d bytes, published %d", len(m.Payload), want)
	}
	if checksum(m.Payload) != m.Metadata.Get(mdSum) {
		return "payload checksum differs"
	}
	return ""
}

// deadLetterMessage is the message a dead letter holds.
func deadLetterMessage(dl admin.DeadLetter) *message.Message {
	m := message.NewMessage(dl.UUID, dl.Payload)
	for k, v := range dl.Metadata {
		m.Metadata.Set(k, v)
	}
	return m
}

// seqOf reads a message's sequence number (0 when it has none).
func seqOf(m *message.Message) int64 {
	n, _ := strconv.ParseInt(m.Metadata.Get(mdSeq), 10, 64)
	return n
}

// fate is what the handlers of one group do with one message, fixed by its UUID and the
// group, so every redelivery gets the same treatment and each group its own.
type fate int

const (
	fateAck        fate = iota // acked on first delivery
	fateRetryOnce              // nacked once (appended again at once), then acked
	fateRetryTwice             // nacked twice (the second retry waits in the retry set), then acked
	fateExhaust                // nacked every time: dead-lettered when retries run out
	fateDeadLetter             // dead-lettered by the handler (streamq.DeadLetter)
)

// fateOf spreads the fates: 2 % retry once, 1.5 % twice, 0.5 % exhaust, 1 % dead letter.
func fateOf(uuid, group string) fate {
	h := fnv.New32a()
	_, _ = h.Write([]byte(group + "/" + uuid))
	switch n := h.Sum32() % 1000; {
	case n < 20:
		return fateRetryOnce
	case n < 35:
		return fateRetryTwice
	case n < 40:
		return fateExhaust
	case n < 50:
		return fateDeadLetter
	}
	return fateAck
}

// result is the handler's answer for a delivery with the given retry count.
func (f fate) result(retries int) string {
	switch {
	case f == fateDeadLetter:
		return resDLQ
	case f == fateExhaust,
		f == fateRetryOnce && retries < 1,
		f == fateRetryTwice && retries < 2:
		return resNack
	}
	return resAck
}

// deadLetterReason is the reason the handler gives streamq.DeadLetter.
const deadLetterReason = "soak: poison message"

// wantsDeadLetter reports whether a group's handlers send the message to the DLQ in the
// end, and the reason the DLQ entry must carry.
func (f fate) wantsDeadLetter() (bool, string) {
	switch f {
	case fateDeadLetter:
		return true, deadLetterReason
	case fateExhaust:
		return true, "retries exhausted"
	}
	return false, ""
}
