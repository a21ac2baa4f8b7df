package admin_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/fulltest"
)

// TestMemoryUseNamesTheCause: at maxmemory, with two topics and three groups, MemoryUse
// attributes the memory held back to each (topic, group), unacked entries with their
// approximate bytes apart from retries, and dead letters to their topic; it names as the
// cause the group that holds back the most (audit, which never consumed 400 messages of
// 2 KiB), not the one merely behind on the other topic (mailer).
func TestMemoryUseNamesTheCause(t *testing.T) {
	e := newOpEnv(t)
	fulltest.MemoryScene(t, e.client, e.pub)
	fulltest.Fill(t, e.client)

	u, err := e.adm.MemoryUse(e.ctx)
	require.NoError(t, err)
	require.NotNil(t, u.Cause)
	assert.Equal(t, fulltest.Orders, u.Cause.Topic)
	assert.Equal(t, fulltest.Audit, u.Cause.Group)
	assert.False(t, u.Truncated)

	audit, ok := u.Group(fulltest.Orders, fulltest.Audit)
	require.True(t, ok)
	assert.Equal(t, int64(fulltest.OrdersCount), audit.Unacked)
	payload := int64(fulltest.OrdersCount * fulltest.OrderSize)
	assert.GreaterOrEqual(t, audit.UnackedBytes, payload, "the entries hold at least their payloads")
	assert.Less(t, audit.UnackedBytes, 2*payload, "about their size: %s", admin.SizeText(audit.UnackedBytes))
	assert.Len(t, audit.Partitions, 2)
	assert.Zero(t, audit.Retries)

	billing, ok := u.Group(fulltest.Orders, fulltest.Billing)
	require.True(t, ok)
	assert.Zero(t, billing.Bytes(), "a group that consumed everything holds nothing back")

	mailer, ok := u.Group(fulltest.Events, fulltest.Mailer)
	require.True(t, ok)
	assert.Equal(t, int64(fulltest.MailerBehind), mailer.Unacked)
	assert.Equal(t, int64(fulltest.MailerRetries), mailer.Retries, "retries apart")
	assert.Positive(t, mailer.RetryBytes)
	assert.Less(t, mailer.Bytes(), audit.Bytes())

	require.Len(t, u.Topics, 2)
	events := u.Topics[0]
	assert.Equal(t, fulltest.Events, events.Topic)
	assert.Equal(t, int64(fulltest.DeadLetters), events.DeadLetters, "dead letters apart, on their topic")
	assert.Positive(t, events.DeadLetterBytes)
	orders := u.Topics[1]
	assert.Equal(t, []string{fulltest.Audit, fulltest.Billing}, []string{orders.Groups[0].Group, orders.Groups[1].Group}, "the group holding the most first")
	assert.GreaterOrEqual(t, orders.StreamBytes, audit.UnackedBytes)
}
