#!/usr/bin/env bash
# The server matrix (make test-servers): on each server named (default: redis8 valkey8.1
# redis8.6 valkey9.1, fetched by scripts/servers.sh; valkey8 when named), with -race,
#   - Watermill's universal suite: single node, 8 partitions keyed, ordered by key, Cluster,
#     Sentinel;
#   - the core tests below, of the root package (its test files are named by feature:
#     redis_full_*, group_*, retry_*, dlq_*, retention_*, publish_*, ...): a full Redis draining
#     (the scripts' allow-oom flags), fencing, handover, retries, DLQ, retention, the server
#     check, idempotent publishing (through lost replies, single node and Cluster), offloaded
#     payloads, script reloading;
#   - of the process-level scenarios (scenario/: kills, SIGSTOPs, failovers), the idempotent
#     publish through a restart of Redis (AOF rewritten, RDB only) and a resend after the
#     first append was acked and deleted;
#   - every internal package's tests (each tests its own Lua scripts, internal/stream the
#     commit frontier's fencing among them; internal/script's TestFlagsAtMaxmemory checks that
#     `#!lua flags=allow-oom` is honoured);
#   - redistest's check that the server running is the one chosen.
# Prints each server's time and, at the end, which servers failed. A server not fetched is
# skipped, saying how to fetch it, unless STREAMQ_REQUIRE_REDIS=1, which fails it.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
TIMEOUT=${TIMEOUT:-15m}
SERVERS_DIR=${STREAMQ_SERVERS_DIR:-$PWD/.servers}
export STREAMQ_SERVERS_DIR=$SERVERS_DIR

core_tests=(
  # Watermill's universal suite
  TestPubSubOnePartition TestPubSubEightPartitionsKeyedByPayload TestPubSubEightPartitionsOrderedByKey
  TestPubSubCluster TestPubSubSentinel
  # a full Redis drains: publishes refused, consumers read, ack, retry and trim
  TestRedisFullDrains TestRedisFullDrainsWithDefaults
  # fencing and handover
  TestStaleOwnerIsFencedAfterAPause TestFinalFlushAfterLosingTheLeaseIsLogged
  TestPerKeyOrderAcrossGracefulHandover TestCrashedMemberPartitionsAndPendingTakenOver
  TestTwelvePartitionsBalanceAndStickyJoin TestLostReadReplyIsRecoveredInOrder
  # retries and dead letters
  TestRetryBackoffThenDeadLetter TestCrashWhileRetryParkedIsTakenOver
  TestDLQTopicDeliversAndReplays TestDLQHandlerResults TestMalformedEntryDeadLetteredAndCounted
  # retention
  TestSafeRetentionWaitsForEveryGroup TestRetentionTrimsByAge TestLengthRetentionStopsAtTheSlowestGroup
  TestDLQRetentionByLength TestOrphanedPayloadsSwept TestAckPolicyDeletesEntries
  # the server check, publishing, scripts
  TestServerCheckRefusesOldRedis TestServerCheckWarnsOnceAboutEviction TestServerCheckEveryClusterMaster
  TestIdempotentPublish TestIdempotentPublishThroughLostReplies TestOffloadedPublishRetriedByTheClient
  TestPublishReloadsScriptsOnNoScript TestPayloadOffloadedAndDeletedAfterAck
  TestClusterScriptsStayInOneSlot
  # internal/redistest: the server running is the one chosen
  TestSelectedServerIsTheOneRunning
)
run_regex="^($(IFS='|'; echo "${core_tests[*]}"))\$"
scenario_tests=(TestIdempotentPublishThroughRedisRestart TestIdempotentResendAfterAckedAndDeleted)
scenario_regex="^($(IFS='|'; echo "${scenario_tests[*]}"))\$"

# A test renamed or removed would leave the regex matching nothing for it: fail instead.
for name in "${core_tests[@]}"; do
  if ! grep -q "^func $name(t \*testing.T)" ./*_test.go internal/redistest/*_test.go; then
    echo "test-servers: no test $name in the root package or internal/redistest: update scripts/test-servers.sh" >&2
    exit 1
  fi
done
for name in "${scenario_tests[@]}"; do
  if ! grep -q "^func $name(t \*testing.T)" scenario/*_test.go; then
    echo "test-servers: no test $name in scenario/: update scripts/test-servers.sh" >&2
    exit 1
  fi
done

# run_server NAME runs the matrix on one server; returns non-zero when a test failed.
run_server() {
  local internal
  internal=$("$GO" list ./internal/... | grep -v '/internal/redistest$') || return 1
  STREAMQ_REDIS_SERVER=$1 "$GO" test -race -count=1 -parallel "${PARALLEL:-8}" -timeout "$TIMEOUT" -run "$run_regex" \
    . ./internal/redistest || return 1
  STREAMQ_REDIS_SERVER=$1 "$GO" test -race -count=1 -timeout "$TIMEOUT" -run "$scenario_regex" ./scenario || return 1
  # shellcheck disable=SC2086 # one word per package
  STREAMQ_REDIS_SERVER=$1 "$GO" test -race -count=1 -timeout "$TIMEOUT" $internal
}

servers=("$@")
[ ${#servers[@]} -gt 0 ] || servers=(redis8 valkey8.1 redis8.6 valkey9.1)
failed=()
for s in "${servers[@]}"; do
  if [ ! -x "$SERVERS_DIR/$s/bin/redis-server" ] && [ "${STREAMQ_REQUIRE_REDIS:-}" != 1 ]; then
    echo "test-servers: skip $s: not fetched into $SERVERS_DIR; fetch it with scripts/servers.sh $s (make servers fetches all)"
    continue
  fi
  echo "test-servers: $s: $("$SERVERS_DIR/$s/bin/redis-server" --version 2>&1)"
  start=$(date +%s)
  if run_server "$s"; then
    echo "test-servers: $s passed in $(($(date +%s) - start)) s"
  else
    echo "test-servers: $s FAILED after $(($(date +%s) - start)) s"
    failed+=("$s")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "test-servers: failed on ${failed[*]}"
  exit 1
fi
