GO        ?= go
PKGS      ?= ./...
TIMEOUT   ?= 15m
# PARALLEL: tests marked t.Parallel run this many at once in each package; most wait on
# timers and Redis, not the CPU, so more than the 2 cores of CI pays
PARALLEL  ?= 8

.PHONY: test test-servers servers test-race test-short bench bench-go lint fmt vet demo fuzz e2e outbox outbox-bench otel docs soak soak-short handover memsize

## test: vet, then every test with the race detector against real redis-servers the tests
## start, then Watermill's unmodified TestReconnect without -race (its harness has a data
## race: see scripts/upstream-reconnect.sh)
test: vet
	$(GO) test -race -count=1 -parallel $(PARALLEL) -timeout $(TIMEOUT) $(PKGS)
	$(MAKE) --no-print-directory e2e
	$(MAKE) --no-print-directory outbox
	$(MAKE) --no-print-directory otel
	$(MAKE) --no-print-directory docs
	GO=$(GO) TIMEOUT=$(TIMEOUT) bash scripts/upstream-reconnect.sh

## servers: fetch the servers of test-servers from Debian's packages into .servers/ (no
## install: apt-get download through a private apt state, dpkg -x; see scripts/servers.sh)
SERVERS ?= redis8 valkey8.1 redis8.6 valkey9.1
servers:
	bash scripts/servers.sh $(SERVERS)

## test-servers: the server matrix: on each of SERVERS (Redis 8.0, Valkey 8.1, Redis 8.6,
## Valkey 9.1, fetched by make servers; Valkey 8.0 with SERVERS=valkey8), with -race,
## Watermill's universal suite, the root package's core tests (a full Redis draining, fencing,
## handover, retries, DLQ, retention) and every internal package's script tests; prints
## each server's time. A server not fetched is skipped, saying how to fetch it, or fails
## with STREAMQ_REQUIRE_REDIS=1 (scripts/test-servers.sh)
test-servers:
	GO=$(GO) TIMEOUT=$(TIMEOUT) PARALLEL=$(PARALLEL) bash scripts/test-servers.sh $(SERVERS)

## e2e: the dashboard in headless Chromium (e2e/, its own module: chromedp needs a newer Go);
## skips without /usr/bin/chromium unless STREAMQ_REQUIRE_BROWSER=1
e2e:
	cd e2e && $(GO) test -race -count=1 -timeout $(TIMEOUT) ./...

## outbox: the transactional outbox (outbox/, its own module: SQL drivers and watermill-sql
## stay out of the root go.mod) against MariaDB and PostgreSQL on 127.0.0.1 (database test;
## STREAMQ_TEST_MYSQL_DSN, STREAMQ_TEST_POSTGRES_DSN); skips without them unless
## STREAMQ_REQUIRE_SQL=1
outbox:
	cd outbox && $(GO) vet ./... && $(GO) test -race -count=1 -timeout $(TIMEOUT) ./...

## otel: OpenTelemetry tracing (otel/, its own module: streamq's go.mod needs no OpenTelemetry)
## with the SDK's in-memory span recorder, on a single redis-server and a 3-master Cluster
otel:
	cd otel && $(GO) vet ./... && $(GO) test -race -count=1 -timeout $(TIMEOUT) ./...

## docs: every Go block of README.md and docs/*.md compiles against the real packages, or is
## an excerpt of a file its own tests build (<!-- excerpt: path -->), or is skipped for the
## reason given (<!-- not-go-checked: reason -->); doccheck/ is its own module (the
## OpenTelemetry snippets need the SDK, which the root go.mod does without). `go test` with
## no package argument (local directory mode) prints what the test prints: the blocks
## checked, and those skipped with their reasons
docs:
	cd doccheck && $(GO) vet ./... && $(GO) test -count=1

## outbox-bench: relay throughput (table to stream, msgs/s) and commit-to-stream latency
## (p50/p99) on both databases
outbox-bench:
	cd outbox && $(GO) test -run '^$$' -bench Throughput -benchtime 20000x .
	cd outbox && $(GO) test -run '^$$' -bench Latency -benchtime 300x .

## soak: the fault-injection soak (soak/, build tag soak): publisher and consumer processes on
## a 16-partition topic while consumers are killed, paused and closed, redis-server restarted
## and killed, the network cut, reset and slowed, a consumer group destroyed, and maxmemory set
## just above used memory for a few seconds (publishes refused, consumers drain); prints the
## figures and fails on any lost message (SOAK_DURATION, SOAKFLAGS="-soak.seed=N ...")
SOAK_DURATION ?= 10m
SOAK_TIMEOUT  ?= 20m
soak:
	$(GO) test -tags soak -run '^TestSoak$$' -count=1 -v -timeout $(SOAK_TIMEOUT) ./soak -soak.duration=$(SOAK_DURATION) $(SOAKFLAGS)

## soak-short: the soak for CI: every fault kind once, in about two minutes
soak-short:
	$(MAKE) --no-print-directory soak SOAK_DURATION=90s SOAK_TIMEOUT=10m

## handover: rolling restart figures (handover/, build tag handover): 3 member processes on
## 12 partitions at 1,000 msg/s, each closed or killed -9 and started again, static
## membership and not; prints the table of docs/consuming.md (HANDOVERFLAGS="-handover.downtime=0s ...")
handover:
	$(GO) test -tags handover -run '^TestRollingRestart$$' -count=1 -v -timeout 40m ./handover $(HANDOVERFLAGS)

## memsize: Redis memory per stream entry (memsize/, build tag memsize): used_memory before and
## after appending 100,000 messages of 16 B, 256 B, 1 KiB and 4 KiB and 2,000 offloaded ones of
## 100 KiB, with and without the idempotency records; prints the table of docs/storage.md
## (MEMSIZEFLAGS="-memsize.count=20000 ...")
memsize:
	$(GO) test -tags memsize -run '^TestMemSize$$' -count=1 -v -timeout 20m ./memsize $(MEMSIZEFLAGS)

## test-race: same as test (every run is -race)
test-race: test

## test-short: every package's tests on single-node Redis servers the tests start, with -race;
## cluster, Sentinel, failover, process-kill and Redis-restart legs (redistest.SkipShort, and
## scenario/ as a whole: its TestMain) and the universal suite's long variants run in make test only.
## SHORT_P packages at a time: their tests wait on timers and Redis more than on the CPU, so 4
## on 2 cores take about 55 s where Go's default of one a core takes about 90 s
SHORT_P ?= 4
test-short:
	$(GO) test -race -short -count=1 -p $(SHORT_P) -parallel $(PARALLEL) $(PKGS)

## vet: go vet
vet:
	$(GO) vet $(PKGS)

## bench: the side-by-side benchmark program (bench/, its own module) against a redis-server
## it starts: streamq 1 and 8 partitions, watermill-redisstream, go-redis alone; BENCHFLAGS=--quick
bench:
	cd bench && $(GO) run . $(BENCHFLAGS)

## bench-go: Go benchmarks of the hot paths
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

## fuzz: fuzz every decoder of stored data for FUZZTIME each (stream entries, retry items,
## DLQ entries, member capabilities, topic meta, outage records)
FUZZTIME ?= 30s
FUZZ_TARGETS = .:FuzzUnmarshal ./internal/retry:FuzzDecodeItem ./internal/dlq:FuzzRebuild ./internal/dlq:FuzzDecode ./internal/dlq:FuzzNewRecord \
	./internal/lease:FuzzParseMemberAndAssign ./internal/partition:FuzzParseCount ./internal/outage:FuzzDecode
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} ($${t%%:*}) for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) $${t%%:*}; \
	done

## lint: gofmt -l (nothing may be left unformatted), then golangci-lint GOLANGCI_LINT_VERSION with the linters and exclusions of .golangci.yml;
## go install puts that version into LINT_BIN (GOPATH's bin) when it is missing or another
GOLANGCI_LINT_VERSION ?= 2.15.0
LINT_BIN      ?= $(firstword $(subst :, ,$(shell $(GO) env GOPATH)))/bin
GOLANGCI_LINT  = $(LINT_BIN)/golangci-lint
lint:
	@if [ "$$($(GOLANGCI_LINT) version --short 2>/dev/null)" != "$(GOLANGCI_LINT_VERSION)" ]; then \
		echo "installing golangci-lint v$(GOLANGCI_LINT_VERSION) into $(LINT_BIN)"; \
		rm -f "$(GOLANGCI_LINT)"; \
		GOBIN="$(LINT_BIN)" $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v$(GOLANGCI_LINT_VERSION); \
	fi
	@unformatted="$$(gofmt -l .)"; if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GOLANGCI_LINT) run $(PKGS)
	cd outbox && $(GOLANGCI_LINT) run -c ../.golangci.yml ./...
	cd otel && $(GOLANGCI_LINT) run -c ../.golangci.yml ./...
	cd doccheck && $(GOLANGCI_LINT) run -c ../.golangci.yml ./...

## fmt: gofmt every file
fmt:
	gofmt -w .

## demo: the partitioned-topic demo on an embedded Redis (or $REDIS_URL)
demo:
	$(GO) run ./cmd/streamq demo
