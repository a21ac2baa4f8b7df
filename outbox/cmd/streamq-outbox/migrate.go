package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/outbox"
)

// migrateOpts are the flags of "migrate".
type migrateOpts struct {
	db    dbFlags
	print bool
}

func migrateCmd(stdout io.Writer) *cobra.Command {
	o := &migrateOpts{}
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create the outbox table and its offsets table (or --print their SQL)",
		Long: `Creates the outbox table and TABLE_offsets (CREATE TABLE IF NOT EXISTS: running it again
changes nothing). --print writes the statements instead, for your own migrations.`,
		Example: `  streamq-outbox migrate --db-driver postgres --db-dsn postgres://app@db/app
  streamq-outbox migrate --db-driver mysql --table orders_outbox --print > 0042_outbox.sql`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), stdout) },
	}
	o.db.add(cmd)
	cmd.Flags().BoolVar(&o.print, "print", false, "print the SQL instead of applying it (no database needed)")
	return cmd
}

func (o *migrateOpts) run(ctx context.Context, stdout io.Writer) error {
	if o.print {
		d, _, err := o.db.dialect()
		if err != nil {
			return err
		}
		stmts, err := outbox.MigrationSQL(d, o.db.table)
		if err != nil {
			return &usageError{err: err}
		}
		for _, s := range stmts {
			printf(stdout, "%s;\n\n", s)
		}
		return nil
	}
	db, d, err := o.db.open(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	if err := outbox.Migrate(ctx, db, d, o.db.table); err != nil {
		return err
	}
	printf(stdout, "outbox tables %s and %s_offsets are in place\n", o.db.table, o.db.table)
	return nil
}
