package outbox

import (
	"fmt"
	"regexp"

	wsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
)

// Dialect is the SQL database an outbox lives in.
type Dialect string

// Dialects.
const (
	// MySQL is MySQL 8 or MariaDB 10.5 and later (InnoDB).
	MySQL Dialect = "mysql"
	// PostgreSQL is PostgreSQL 13 and later (xid8 and pg_current_xact_id).
	PostgreSQL Dialect = "postgres"
)

// DefaultTable is the outbox table's name when Config.Table and RelayConfig.Table are empty.
const DefaultTable = "streamq_outbox"

// offsetsSuffix names the table of consumer-group offsets beside the outbox table.
const offsetsSuffix = "_offsets"

// tableName is what a table name may be: it is written into queries, so no quoting games.
// 55 leaves room for the suffix within PostgreSQL's 63-byte identifiers.
var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,54}$`)

func validateTable(table string) error {
	if !tableName.MatchString(table) {
		return fmt.Errorf("%w: Table %q must be 1-55 letters, digits or underscores, not starting with a digit",
			ErrInvalidConfig, table)
	}
	return nil
}

func (d Dialect) validate() error {
	switch d {
	case MySQL, PostgreSQL:
		return nil
	case "":
		return fmt.Errorf("%w: Dialect is required (outbox.MySQL or outbox.PostgreSQL)", ErrInvalidConfig)
	}
	return fmt.Errorf("%w: Dialect %q is neither %q nor %q", ErrInvalidConfig, d, MySQL, PostgreSQL)
}

// quote quotes an identifier that passed validateTable.
func (d Dialect) quote(ident string) string {
	if d == MySQL {
		return "`" + ident + "`"
	}
	return `"` + ident + `"`
}

// adapters are watermill-sql's schema and offsets adapters of one outbox table: the table
// and its offsets table get the outbox's names instead of watermill_<topic>.
type adapters struct {
	schema  wsql.SchemaAdapter
	offsets wsql.OffsetsAdapter
}

// newAdapters builds watermill-sql's default adapters for d, naming table and
// table_offsets; batch is the subscriber's SubscribeBatchSize (0 on the publishing side).
func newAdapters(d Dialect, table string, batch int) adapters {
	messages := func(string) string { return d.quote(table) }
	offsets := func(string) string { return d.quote(table + offsetsSuffix) }
	if d == MySQL {
		return adapters{
			schema:  wsql.DefaultMySQLSchema{GenerateMessagesTableName: messages, SubscribeBatchSize: batch},
			offsets: wsql.DefaultMySQLOffsetsAdapter{GenerateMessagesOffsetsTableName: offsets},
		}
	}
	return adapters{
		schema: wsql.DefaultPostgreSQLSchema{GenerateMessagesTableName: messages, SubscribeBatchSize: batch,
			InitializeSchemaWithoutTransaction: true},
		offsets: wsql.DefaultPostgreSQLOffsetsAdapter{GenerateMessagesOffsetsTableName: offsets},
	}
}
