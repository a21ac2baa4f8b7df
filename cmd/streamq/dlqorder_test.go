package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
)

// "dlq list" lists newest first over every partition, the dashboard's order, with the whole
// reason wrapped in the default table; --oldest-first lists the oldest failures first.
func TestCLIDLQListOrder(t *testing.T) {
	e := newCLIEnv(t)
	const topic = "ordered-dlq"
	require.NoError(t, e.adm.CreateTopic(e.ctx, topic, 3))
	long := "payment gateway refused the charge: card issuer timeout after 3 attempts, " +
		"see runbook PAY-17 before replaying, the customer was not charged"
	var ids []string
	for i := range 5 {
		d, err := e.adm.AddDeadLetter(e.ctx, admin.NewDeadLetter{Topic: topic, Partition: i % 3, Reason: long, Payload: []byte("x")})
		require.NoError(t, err)
		ids = append(ids, d.ID)
		time.Sleep(2 * time.Millisecond) // distinct milliseconds: an order to check
	}

	var newest []deadLetterView
	e.jsonOf(&newest, "dlq", "list", topic)
	require.Len(t, newest, 5)
	for i, v := range newest {
		assert.Equal(t, ids[4-i], v.ID, "newest first")
	}
	page, err := e.adm.FindDeadLetters(e.ctx, topic, admin.DLQQuery{})
	require.NoError(t, err)
	for i, d := range page.Letters {
		assert.Equal(t, d.ID, newest[i].ID, "the dashboard's order")
	}

	var oldest []deadLetterView
	e.jsonOf(&oldest, "dlq", "list", topic, "--oldest-first")
	require.Len(t, oldest, 5)
	for i, v := range oldest {
		assert.Equal(t, ids[i], v.ID, "--oldest-first")
	}

	var two []deadLetterView
	e.jsonOf(&two, "dlq", "list", topic, "-n", "2", "--partition", "0")
	require.Len(t, two, 2)
	assert.Equal(t, []string{ids[3], ids[0]}, []string{two[0].ID, two[1].ID}, "the newest of partition 0")

	table := e.ok("dlq", "list", topic)
	flat := strings.Join(strings.Fields(table), " ")
	assert.Contains(t, flat, long, "the whole reason, wrapped")
	for _, line := range strings.Split(strings.TrimRight(table, "\n"), "\n") {
		assert.LessOrEqual(t, len([]rune(line)), tableWidth, "line %q", line)
	}
}
