package outbox_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/outbox"
)

// runBinary runs streamq-outbox with args and no $OUTBOX_DSN / $REDIS_URL.
func runBinary(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "REDIS_URL=", "OUTBOX_DSN=")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return out.String(), errOut.String(), code
}

// TestBinaryMigrateAndStatus: streamq-outbox migrate creates the tables (twice is fine) and
// --print prints MigrationSQL; status counts the rows waiting in the database and adds what
// the relays reported into Redis; usage errors exit 2, a missing table exits 1.
func TestBinaryMigrateAndStatus(t *testing.T) {
	forEachDB(t, func(t *testing.T, d outbox.Dialect) {
		e := newEnv(t, d)
		_, source := dsn(d)
		db := []string{"--db-driver", string(d), "--db-dsn", source}
		table := "obx_" + randomHex(6)
		t.Cleanup(func() {
			_, _ = e.db.ExecContext(e.ctx, "DROP TABLE IF EXISTS "+table)
			_, _ = e.db.ExecContext(e.ctx, "DROP TABLE IF EXISTS "+table+"_offsets")
		})
		for range 2 {
			out, errOut, code := runBinary(t, append([]string{"migrate", "--table", table}, db...)...)
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, out, "are in place")
		}
		out, _, code := runBinary(t, "migrate", "--print", "--db-driver", string(d), "--table", table)
		require.Equal(t, 0, code)
		stmts, err := outbox.MigrationSQL(d, table)
		require.NoError(t, err)
		assert.Equal(t, strings.Join(stmts, ";\n\n")+";\n\n", out)

		for i := range 3 {
			e.publishTx(true, "orders", keyed("k", i))
		}
		out, errOut, code := runBinary(t, append([]string{"status", "--table", e.table, "--redis-url", e.redisURL}, db...)...)
		require.Equal(t, 0, code, errOut)
		assert.Contains(t, out, "rows waiting:  3")
		assert.Contains(t, out, "none reported into Redis: is a relay running?")

		e.startRelay(e.fastRelay())
		e.waitMoved("orders", 3, 30*time.Second)
		var v struct {
			Pending int64 `json:"pending"`
			Relays  *struct {
				Moved int64 `json:"moved"`
				Live  int   `json:"live"`
			} `json:"relays"`
		}
		out, errOut, code = runBinary(t, append([]string{"status", "--json", "--table", e.table, "--redis-url", e.redisURL}, db...)...)
		require.Equal(t, 0, code, errOut)
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		assert.Zero(t, v.Pending)
		require.NotNil(t, v.Relays, out)
		assert.Equal(t, 1, v.Relays.Live)

		_, _, code = runBinary(t, "status", "--db-driver", "oracle", "--db-dsn", "x")
		assert.Equal(t, 2, code)
		_, _, code = runBinary(t, "relay", "--db-driver", string(d))
		assert.Equal(t, 2, code, "no DSN")
		_, errOut, code = runBinary(t, append([]string{"relay", "--table", "obx_none_" + randomHex(3), "--redis-url", e.redisURL}, db...)...)
		assert.Equal(t, 1, code)
		assert.Contains(t, errOut, "table missing")
	})
}
