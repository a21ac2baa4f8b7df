package outbox_test

import (
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/outbox"
)

// TestCommitPublishesRollbackDoesNot: the events of a committed transaction arrive in the
// streamq topic with their UUID, payload, metadata and partition key (the partition that
// key hashes to); those of a rolled-back transaction never do, nor their business row.
// Events published after the rollback arriving proves the rolled-back ones are not merely
// late: the relay moves rows in order. A message without a partition key goes to the
// partition of its UUID.
func TestCommitPublishesRollbackDoesNot(t *testing.T) {
	forEachDB(t, func(t *testing.T, d outbox.Dialect) {
		e := newEnv(t, d)
		e.startRelay(e.fastRelay())
		const topic = "orders"

		committed := []*message.Message{keyed("customer-1", 0), keyed("customer-2", 0), keyed("customer-1", 1)}
		committed[0].Metadata.Set("trace_id", "abc")
		e.publishTx(true, topic, committed...)
		rolledBack := []*message.Message{keyed("customer-1", 2), keyed("customer-3", 0)}
		e.publishTx(false, topic, rolledBack...)
		after := keyed("customer-3", 1)
		keyless := message.NewMessage(watermill.NewUUID(), []byte("no key"))
		e.publishTx(true, topic, after, keyless)

		e.waitMoved(topic, 5, 30*time.Second)
		byUUID := map[string]int{}
		got := e.entries(topic)
		for i, en := range got {
			byUUID[en.UUID] = i
		}
		for _, m := range append(committed, after, keyless) {
			i, ok := byUUID[m.UUID]
			require.True(t, ok, "committed message %s is missing", m.UUID)
			en := got[i]
			assert.Equal(t, string(m.Payload), string(en.Payload))
			for k, v := range m.Metadata {
				assert.Equal(t, v, en.Metadata[k], "metadata %q of %s", k, m.UUID)
			}
			key := m.Metadata.Get(streamq.PartitionKeyMetadata)
			if key == "" {
				key = m.UUID // the relay routes a keyless message by its UUID, the same way every time
				assert.NotContains(t, en.Metadata, streamq.PartitionKeyMetadata, "no key is added")
			}
			assert.Equal(t, streamq.HashPartitioner{}.Partition(key, 8), en.Partition, "partition of key %s", key)
		}
		for _, m := range rolledBack {
			assert.NotContains(t, byUUID, m.UUID, "a rolled-back message reached the stream")
		}
		assert.Len(t, got, 5, "nothing but the committed messages, once each")
		assert.Equal(t, 2, e.bizRows(), "the rolled-back business row is gone too")
	})
}

// TestPublisherRefusesBadInput: a Publisher needs a transaction and a dialect, and refuses
// a topic streamq would refuse before writing anything; an empty Publish writes nothing.
func TestPublisherRefusesBadInput(t *testing.T) {
	_, err := outbox.NewPublisher(nil, outbox.Config{Dialect: outbox.MySQL})
	assert.ErrorIs(t, err, outbox.ErrInvalidConfig)
	forEachDB(t, func(t *testing.T, d outbox.Dialect) {
		e := newEnv(t, d)
		tx, err := e.db.BeginTx(e.ctx, nil)
		require.NoError(t, err)
		defer func() { _ = tx.Rollback() }()
		_, err = outbox.NewPublisher(tx, outbox.Config{})
		assert.ErrorIs(t, err, outbox.ErrInvalidConfig, "no dialect")
		_, err = outbox.NewPublisher(tx, outbox.Config{Dialect: d, Table: "bad-name"})
		assert.ErrorIs(t, err, outbox.ErrInvalidConfig, "table")
		pub, err := outbox.NewPublisher(tx, outbox.Config{Dialect: d, Table: e.table})
		require.NoError(t, err)
		assert.Error(t, pub.Publish("bad topic", message.NewMessage(watermill.NewUUID(), nil)))
		assert.Error(t, pub.Publish("orders", nil))
		require.NoError(t, pub.Publish("orders"))
		lag, err := outbox.ReadLag(e.ctx, tx, d, e.table, "")
		require.NoError(t, err)
		assert.Zero(t, lag.Pending, "nothing was written")
		require.NoError(t, pub.Close())
		require.NoError(t, pub.Close())
		assert.ErrorIs(t, pub.Publish("orders", message.NewMessage(watermill.NewUUID(), nil)), outbox.ErrClosed)
	})
}
