package outbox

import "errors"

var (
	// ErrInvalidConfig wraps every configuration error of NewPublisher and NewRelay.
	ErrInvalidConfig = errors.New("invalid config")
	// ErrClosed is returned by Run on a Relay that was closed, and by Publish on a closed
	// Publisher.
	ErrClosed = errors.New("outbox: closed")
	// ErrRunning is returned by a second Run of the same Relay.
	ErrRunning = errors.New("outbox: relay already running")
	// ErrNoTable is returned by Run when the outbox table or its offsets table does not
	// exist: apply the migration (Migrate, MigrationSQL, or streamq-outbox migrate) first.
	ErrNoTable = errors.New("outbox: table missing (apply the migration first)")
)
