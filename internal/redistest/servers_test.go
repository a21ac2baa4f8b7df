package redistest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSelectedServerIsTheOneRunning: the server started is the one STREAMQ_REDIS_SERVER chose,
// by the version in its INFO (valkey8: valkey_version 8.*, redis8: redis_version 8.*, ...).
func TestSelectedServerIsTheOneRunning(t *testing.T) {
	s := Start(t)
	info, err := s.Client(t).Info(context.Background(), "server").Result()
	if err != nil {
		t.Fatalf("INFO server: %v", err)
	}
	name := Selected()
	if name != "" {
		name = filepath.Base(name) // a folder made by scripts/servers.sh is named for its server
	}
	field, want := expectedVersion(name)
	got := infoField(info, field)
	t.Logf("%s=%q: %s %s", ServerEnv, Selected(), field, got)
	if !strings.HasPrefix(got, want) {
		t.Fatalf("%s = %q, want %s*", field, got, want)
	}
}

// expectedVersion returns the INFO field and version prefix of a server name: valkey8.1 is
// valkey_version 8.1., redis8 redis_version 8.; no name (PATH's redis-server) any
// redis_version.
func expectedVersion(name string) (field, prefix string) {
	product := strings.TrimRight(name, "0123456789.")
	version := strings.TrimPrefix(name, product)
	if product == "" {
		product = "redis"
	}
	if version != "" {
		version += "."
	}
	return product + "_version", version
}

// infoField returns the value of field in an INFO reply ("" when absent).
func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

func TestExpectedVersion(t *testing.T) {
	for _, tc := range []struct{ name, field, prefix string }{
		{"", "redis_version", ""},
		{"redis8", "redis_version", "8."},
		{"valkey8", "valkey_version", "8."},
		{"valkey8.1", "valkey_version", "8.1."},
	} {
		field, prefix := expectedVersion(tc.name)
		if field != tc.field || prefix != tc.prefix {
			t.Errorf("expectedVersion(%q) = %q, %q; want %q, %q", tc.name, field, prefix, tc.field, tc.prefix)
		}
	}
}

// TestUnfetchedServerSaysHowToFetchIt: a name whose folder scripts/servers.sh has not made
// is missing, with the command that fetches it; a fetched one is found.
func TestUnfetchedServerSaysHowToFetchIt(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(ServersDirEnv, dir)
	t.Setenv(ServerEnv, "valkey8")
	if _, missing := findBinary("redis-server"); !strings.Contains(missing, "fetch it with scripts/servers.sh valkey8") {
		t.Fatalf("missing = %q", missing)
	}
	bin := filepath.Join(dir, "valkey8", "bin")
	if err := os.MkdirAll(bin, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "redis-cli"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if path, missing := findBinary("redis-cli"); missing != "" || path != filepath.Join(bin, "redis-cli") {
		t.Fatalf("findBinary = %q, %q", path, missing)
	}
	t.Setenv(ServerEnv, filepath.Join(dir, "valkey8"))
	if path, missing := findBinary("redis-cli"); missing != "" || path != filepath.Join(bin, "redis-cli") {
		t.Fatalf("findBinary by folder = %q, %q", path, missing)
	}
}
