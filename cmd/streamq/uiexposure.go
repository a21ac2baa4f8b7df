package main

import (
	"fmt"
	"net"

	"github.com/streamq-dev/streamq/dashboard"
)

// What a dashboard without credentials beyond loopback gives anyone who can reach it: the
// read-only API (dashboard/api_*.go), and with --allow-writes its write endpoints.
const (
	uiReadExposure = "topic and consumer group names, consumer names, lag and pending entries, " +
		"message payloads and metadata (message browser), dead letter payloads, metadata and reasons, " +
		"and the Redis servers' addresses and memory"
	uiWriteExposure = "replay, delete and clear dead letters, reset group offsets and pause or resume groups"
)

// uiExposed reports whether a dashboard on addr with opts answers anyone who can reach it: it
// listens beyond loopback and asks for no credentials.
func uiExposed(addr net.Addr, opts dashboard.Options) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && !tcp.IP.IsLoopback() && opts.Token == "" && opts.BasicAuthUser == ""
}

// checkExposure refuses writes on an exposed dashboard unless insecure (--insecure-allow-writes).
func checkExposure(addr net.Addr, opts dashboard.Options, insecure bool) error {
	if !opts.AllowWrites || insecure || !uiExposed(addr, opts) {
		return nil
	}
	return usageErrorf("refusing --allow-writes on %s without authentication: anyone who can reach it could %s. "+
		"Add --token (or $%s) or --basic-auth user:password (or $%s), listen on loopback (--addr 127.0.0.1:PORT), "+
		"or add --insecure-allow-writes to serve writes to anyone anyway", addr, uiWriteExposure, envUIToken, envUIBasicAuth)
}

// warnExposure prints what an exposed dashboard serves to anyone; nothing when it is not.
func (a *app) warnExposure(addr net.Addr, opts dashboard.Options) {
	if !uiExposed(addr, opts) {
		return
	}
	fmt.Fprintf(a.stderr, "warning: listening beyond loopback without --token or --basic-auth: anyone who can reach it can read %s\n", uiReadExposure)
	if opts.AllowWrites {
		fmt.Fprintf(a.stderr, "WARNING: --insecure-allow-writes: anyone who can reach http://%s/ can %s, with no authentication\n", addr, uiWriteExposure)
	}
}
