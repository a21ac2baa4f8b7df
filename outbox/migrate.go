package outbox

import (
	"context"
	"fmt"
	"strings"

	wsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
)

// MigrationSQL returns the statements that create the outbox table and its offsets table
// (TABLE_offsets) in dialect d: watermill-sql's own schema for a topic, under the outbox's
// names. Each is CREATE TABLE IF NOT EXISTS, so applying them again changes nothing. Put
// them in your migrations, or call Migrate. table "" means DefaultTable.
//
// The outbox table: offset (the order rows are moved in; on PostgreSQL with transaction_id,
// the writing transaction), uuid (the envelope's, not the message's), created_at, payload
// (the Watermill forwarder envelope, JSON: destination topic, message UUID, payload and
// metadata), metadata. The offsets table holds, per consumer group, the last row moved.
func MigrationSQL(d Dialect, table string) ([]string, error) {
	if err := d.validate(); err != nil {
		return nil, err
	}
	if table == "" {
		table = DefaultTable
	}
	if err := validateTable(table); err != nil {
		return nil, err
	}
	a := newAdapters(d, table, 0)
	msgs, err := a.schema.SchemaInitializingQueries(wsql.SchemaInitializingQueriesParams{Topic: table})
	if err != nil {
		return nil, err
	}
	offs, err := a.offsets.SchemaInitializingQueries(wsql.OffsetsSchemaInitializingQueriesParams{Topic: table})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, q := range append(msgs, offs...) {
		out = append(out, tidySQL(q.Query))
	}
	return out, nil
}

// Migrate applies MigrationSQL(d, table) on db, which must be allowed to create tables. It
// is not meant for an open transaction of the service: on MySQL, CREATE TABLE commits it.
func Migrate(ctx context.Context, db Executor, d Dialect, table string) error {
	stmts, err := MigrationSQL(d, table)
	if err != nil {
		return err
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("outbox migration: %w", err)
		}
	}
	return nil
}

// tidySQL trims watermill-sql's indentation: one statement, the column lines indented by
// two spaces, no trailing semicolon.
func tidySQL(q string) string {
	lines := strings.Split(strings.TrimSpace(q), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
		if i > 0 && !strings.HasPrefix(lines[i], ")") {
			lines[i] = "  " + lines[i]
		}
	}
	return strings.TrimSuffix(strings.Join(lines, "\n"), ";")
}
