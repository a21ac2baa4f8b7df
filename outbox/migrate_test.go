package outbox_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/outbox"
)

// TestREADMEShowsTheMigration: the migration SQL in README.md is MigrationSQL's, for both
// databases, so the documented schema is the one the relay reads.
func TestREADMEShowsTheMigration(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	for _, db := range dialects {
		stmts, err := outbox.MigrationSQL(db.d, "")
		require.NoError(t, err)
		require.Len(t, stmts, 2)
		for _, s := range stmts {
			assert.Contains(t, string(readme), s+";", "README.md's %s migration", db.name)
		}
	}
	_, err = outbox.MigrationSQL("sqlite", "")
	assert.ErrorIs(t, err, outbox.ErrInvalidConfig)
	_, err = outbox.MigrationSQL(outbox.MySQL, "a;b")
	assert.ErrorIs(t, err, outbox.ErrInvalidConfig)
	stmts, err := outbox.MigrationSQL(outbox.PostgreSQL, "orders_outbox")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(stmts[1], `CREATE TABLE IF NOT EXISTS "orders_outbox_offsets"`), stmts[1])
}
