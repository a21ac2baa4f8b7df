#!/usr/bin/env bash
# Runs Watermill's unmodified universal suite with a RestartServiceCommand (TestReconnect
# restarts the test's redis-server twice under load), built without -race.
#
# Watermill v1.5.1's TestReconnect collects published messages in a goroutine with no
# synchronisation (pubsub/tests/test_pubsub.go:1086, read at :1120). When the subscriber
# delivers the last message before that goroutine appended it, the test reports
# "received: 10000, sent: 9999 ... missing: [], extra [<id>]": nothing is lost, the harness
# just read its list too early. Only that exact symptom (no message missing, no other test
# failing) is accepted; any missing message or other failure fails. TestReconnectUnderRace is
# the same scenario with the harness fixed, run under -race by `make test`.
set -uo pipefail
GO=${GO:-go}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# TestPubSubReconnect is one of the process-level scenarios (scenario/).
run() { "$GO" test -count=1 -timeout "${TIMEOUT:-15m}" -run '^TestPubSubReconnect$' ./scenario >"$log" 2>&1; }

harness_race_only() {
  grep -q 'missing: \[\], extra \[' "$log" &&
    ! grep -E -- '--- FAIL' "$log" | grep -v -E 'TestPubSubReconnect(/TestReconnect(/[0-9a-f-]+)?)? ' | grep -q . &&
    ! grep -q 'missing: \[[^]]' "$log"
}

if run; then
  if grep -q 'no tests to run' "$log"; then # renamed or moved: fail rather than pass on nothing
    echo "upstream TestReconnect: no test TestPubSubReconnect in ./scenario: update scripts/upstream-reconnect.sh" >&2
    exit 1
  fi
  grep -E '^(ok|PASS)' "$log" | tail -1
  echo "upstream TestReconnect: passed"
  exit 0
fi
if harness_race_only; then
  # Every published message was received ("missing: []"); the harness's list simply lacked
  # the last ones its collector goroutine had not appended yet. Not a delivery failure.
  grep -E 'received: [0-9]+, sent: [0-9]+|missing: \[\], extra' "$log" | head -2
  echo "upstream TestReconnect: passed; the failure above is only the known watermill v1.5.1 harness race (nothing missing)"
  exit 0
fi
grep -v -E '^(publishing message|cannot publish|error on publish|\[watermill\])' "$log" | tail -60
exit 1
