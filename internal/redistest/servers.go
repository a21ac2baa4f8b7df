package redistest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const (
	// ServerEnv chooses the server the helpers start: unset or empty, redis-server and
	// redis-cli from PATH; a name (valkey8, redis8, valkey8.1), the wrappers that
	// scripts/servers.sh makes in ServersDir()/NAME/bin; a path (anything with a "/"), the
	// folder holding such a bin/.
	ServerEnv = "STREAMQ_REDIS_SERVER"
	// ServersDirEnv is the folder of the fetched servers; default: .servers in the
	// repository (where scripts/servers.sh puts them).
	ServersDirEnv = "STREAMQ_SERVERS_DIR"
	// fetchScript is what fetches the servers, named in skip messages.
	fetchScript = "scripts/servers.sh"
)

// Selected returns the server chosen with STREAMQ_REDIS_SERVER ("" for the one on PATH).
func Selected() string {
	return os.Getenv(ServerEnv)
}

// ServersDir returns the folder of the servers scripts/servers.sh fetched:
// STREAMQ_SERVERS_DIR, else .servers in the repository this package's source is in.
func ServersDir() string {
	if dir := os.Getenv(ServersDirEnv); dir != "" {
		return dir
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ".servers"
	}
	return filepath.Join(filepath.Dir(file), "..", "..", ".servers")
}

// selectedBinary returns the path of name (redis-server or redis-cli) of the server sel
// chose, and whether it is there.
func selectedBinary(sel, name string) (string, bool) {
	dir := sel
	if !strings.Contains(sel, "/") {
		dir = filepath.Join(ServersDir(), sel)
	}
	path := filepath.Join(dir, "bin", name)
	info, err := os.Stat(path)
	return path, err == nil && !info.IsDir() && info.Mode()&0o111 != 0
}

// lookupBinary returns the path of name (redis-server or redis-cli) of the chosen server,
// skipping or failing t when absent.
func lookupBinary(t testing.TB, name string) string {
	t.Helper()
	path, missing := findBinary(name)
	if missing == "" {
		return path
	}
	if RequireRedis() {
		t.Fatalf("redistest: %s and STREAMQ_REQUIRE_REDIS=1", missing)
	}
	t.Skipf("%s; or set STREAMQ_REQUIRE_REDIS=1 to make this a failure", missing)
	return ""
}

// findBinary returns the path of name of the chosen server, or says what is missing and
// how to get it.
func findBinary(name string) (path, missing string) {
	sel := Selected()
	if sel == "" {
		path, err := exec.LookPath(name)
		if err != nil {
			return "", name + " not found on PATH; install it (apt-get install redis-server)"
		}
		return path, ""
	}
	path, ok := selectedBinary(sel, name)
	if !ok {
		return "", ServerEnv + "=" + sel + ": " + path + " not found; fetch it with " +
			fetchScript + " " + filepath.Base(sel)
	}
	return path, ""
}
