package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/internal/server"
)

// version is streamq's version: the one its next tag carries (v0.1.0 is the first), as
// CHANGELOG.md's newest heading says. A test keeps the two equal.
const version = "0.1.0"

// versionView is "version --json".
type versionView struct {
	Version string `json:"version"` // streamq's version (version)
	// Module is the module version the binary was built from: "v0.1.0" for a go install of
	// the tag, "(devel)" for a build from a checkout.
	Module   string `json:"module"`
	Commit   string `json:"commit"`   // the VCS revision, "" when not recorded
	Modified bool   `json:"modified"` // the checkout had uncommitted changes
	Go       string `json:"go"`       // the Go version that built it
	Platform string `json:"platform"` // GOOS/GOARCH
	// Redis is the server's version ("" when it could not be reached or did not say);
	// RedisURL the server asked (password hidden) and RedisError why it could not be.
	Redis      string `json:"redis"`
	RedisURL   string `json:"redisUrl"`
	RedisError string `json:"redisError,omitempty"`
}

// versionCmd is "streamq version".
func versionCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of streamq, of Go, and of the Redis server when reachable",
		Long: `Prints streamq's version (that of CHANGELOG.md), the module version and commit it was
built from when they differ (from the build information), the Go version that built it, and
the version of the Redis server it would talk to, when that server can be reached (the exit
code is 0 either way: an unreachable server is reported, not an error).`,
		Example: `  streamq version
  REDIS_URL=redis://cache:6379 streamq version -o json`,
		GroupID: groupOther,
		Args:    argsExactly(),
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			v := a.versions(cmd.Context())
			if a.json {
				return printJSON(a.stdout, v)
			}
			return printVersion(a, v)
		}),
	}
	a.addJSONFlag(cmd)
	return cmd
}

// versions reads the build information and asks the Redis server its version.
func (a *app) versions(ctx context.Context) versionView {
	v := versionView{Version: version, Module: "unknown", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v.Module = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	t := a.target(defaultRedisURL)
	v.RedisURL = redactURLs(splitURLs(t.raw)) + " (" + t.source + ")"
	if _, err := a.admin(ctx); err != nil {
		v.RedisError = err.Error()
		return v
	}
	v.RedisURL = a.conn.where()
	for _, n := range server.Read(ctx, a.conn.client) {
		if n.Err == nil && n.Facts.Version != "" {
			v.Redis = n.Facts.Version
			break
		}
	}
	return v
}

func printVersion(a *app, v versionView) error {
	build := v.Version
	if v.Module != "v"+v.Version {
		build += ", module " + v.Module
	}
	if v.Commit != "" {
		build += ", commit " + shortCommit(v.Commit)
	}
	if v.Modified {
		build += ", modified"
	}
	t := newTable(a.stdout)
	t.row("streamq", build)
	t.row("go", v.Go+" "+v.Platform)
	switch {
	case v.RedisError != "":
		t.row("redis", "not reachable: "+v.RedisError)
	case v.Redis == "":
		t.row("redis", "did not say its version, at "+v.RedisURL)
	default:
		t.row("redis", v.Redis+" at "+v.RedisURL)
	}
	if err := t.flush(); err != nil {
		return fmt.Errorf("print version: %w", err)
	}
	return nil
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return strings.TrimSpace(c)
}
