// Package handover measures what a rolling restart of a consumer group costs: three member
// processes on a 12-partition topic under continuous traffic (1,000 msg/s over 48 keys, four
// per partition) are restarted one after the other, each closed gracefully or killed with
// SIGKILL, down for a while (-handover.downtime: 0s and 3s) and started again, with static
// membership (StaticMemberGrace, stable names), without it (a new name per process, as a
// generated one), and with stable names that are not static. It is built only with the
// handover build tag, as a test (about 8 minutes):
//
//	go test -tags handover -run TestRollingRestart -v -timeout 40m ./handover
//	make handover
//
// Each member is this test binary run again (HANDOVER_ROLE=member): a real process, so a
// kill is a kill -9. Members use the default lease settings (LeaseTTL 10s, RenewInterval 3s,
// RebalanceInterval 2s; StaticMemberGrace = LeaseTTL when static) and ack every message at
// once. Every member writes each delivery to its ledger before acking it; the orchestrator
// reads every lease every 5ms. Per scenario it prints, from the first restart until the last
// member settled: each partition's longest time without delivering a message not delivered
// before, the owner changes (a partition going to a member of another name; the same name
// in a new process is not a change), and the messages delivered more than once. It ends
// with a Markdown table of all scenarios (docs/consuming.md, Static membership and rolling restarts).
package handover
