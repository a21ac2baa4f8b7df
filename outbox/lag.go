package outbox

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Lag is how far a consumer group of an outbox is behind its table.
type Lag struct {
	// Pending is the number of rows not moved yet.
	Pending int64
	// OldestAge is the age of the oldest row not moved yet, by the database's clock
	// (created_at is when its transaction wrote it; on MySQL to the second); 0 when none.
	OldestAge time.Duration
}

// ReadLag measures the lag of group ("" for DefaultConsumerGroup) on the outbox table
// ("" for DefaultTable) in db: one COUNT over the rows after the group's offset. On
// PostgreSQL it counts rows of committed transactions the relay does not read yet because
// an older transaction is still open (their order is not known before it ends).
func ReadLag(ctx context.Context, db Executor, d Dialect, table, group string) (Lag, error) {
	if err := d.validate(); err != nil {
		return Lag{}, err
	}
	setDefault(&table, DefaultTable)
	setDefault(&group, DefaultConsumerGroup)
	if err := validateTable(table); err != nil {
		return Lag{}, err
	}
	rows, err := db.QueryContext(ctx, lagQuery(d, table), group)
	if err != nil {
		return Lag{}, fmt.Errorf("outbox lag of %s: %w", table, err)
	}
	defer func() { _ = rows.Close() }() // its error is rows.Err()
	var l Lag
	var age float64
	if rows.Next() {
		err = rows.Scan(&l.Pending, &age)
	}
	if err = errors.Join(err, rows.Err()); err != nil {
		return Lag{}, fmt.Errorf("outbox lag of %s: %w", table, err)
	}
	l.OldestAge = time.Duration(age * float64(time.Second))
	return l, nil
}

// lagQuery counts the rows after group's offset and the age in seconds of the oldest;
// its one argument is the group.
func lagQuery(d Dialect, table string) string {
	t, o := d.quote(table), d.quote(table+offsetsSuffix)
	if d == MySQL {
		return "SELECT COUNT(*), COALESCE(TIMESTAMPDIFF(MICROSECOND, MIN(`created_at`), CURRENT_TIMESTAMP(6)), 0) / 1e6" +
			" FROM " + t + " WHERE `offset` > COALESCE((SELECT `offset_acked` FROM " + o + " WHERE `consumer_group` = ?), 0)"
	}
	// The rows after (last_processed_transaction_id, offset_acked), in the relay's order; all
	// of them when the group has no offset yet.
	return `WITH last AS (SELECT offset_acked, last_processed_transaction_id AS xid FROM ` + o + ` WHERE consumer_group = $1)
SELECT COUNT(*), COALESCE(EXTRACT(EPOCH FROM (LOCALTIMESTAMP - MIN(created_at))), 0)::float8 FROM ` + t + `
WHERE NOT EXISTS (SELECT 1 FROM last)
   OR transaction_id > (SELECT xid FROM last)
   OR (transaction_id = (SELECT xid FROM last) AND "offset" > (SELECT offset_acked FROM last))`
}
