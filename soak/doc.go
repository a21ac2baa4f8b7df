// Package soak is streamq's fault-injection soak program. It is built only with the soak build
// tag, as a test:
//
//	go test -tags soak -run TestSoak ./soak -soak.duration=10m -timeout 20m
//
// TestSoak starts a redis-server (AOF, appendfsync always), publisher and consumer processes
// (this test binary run again with SOAK_ROLE set: real OS processes, not goroutines) on one
// topic of 16 partitions read by two consumer groups, and a TCP proxy per process between it
// and Redis. While they run it injects faults: kill -9, SIGSTOP past the lease TTL and SIGTERM
// (Close during in-flight work) of consumers, restarts and kill -9 of redis-server, network
// cuts of one consumer and of everyone, connection resets, added latency, XGROUP DESTROY of
// one group on some partitions under its running members (the other group is the control),
// and memory pressure: maxmemory set just above used memory (noeviction) for a few seconds,
// then restored, so Redis refuses publishes while the consumers go on draining. A publisher
// sends a message whose Publish failed again, same UUID, until a Publish of it returns nil.
// Every process writes a JSON-lines ledger; at the end TestSoak checks from the ledgers and
// the dead-letter queues that no message whose Publish returned nil was lost, that none was
// appended twice, that no payload went missing, that per-key order held except where a retry
// or a change of owner explains it, that no owner delivered after another took its partition
// over, that the members recreated a destroyed group once per partition, never behind its
// commit frontier, and that Redis refused publishes as full during every memory fault and
// never outside one; what a destroy cost the destroyed group inside its window is reported,
// not failed. It prints the figures: messages, duplicates, reorders, recovery times per
// fault, per group destroy the partitions hit, the redeliveries and the losses in its window,
// and per memory fault the publishes refused and for how long.
package soak
