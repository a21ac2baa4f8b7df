// Package scenario holds streamq's process-level scenarios, as tests only (package
// scenario_test): a member process SIGKILLed or SIGSTOPped (sigstop, static_kill, keyed_kill,
// the effectively-once pipeline), a Redis Cluster master or a Sentinel master killed and failed
// over, redis-server restarted under load (the reconnect runs of Watermill's universal suite)
// or down for a while. Their child processes are this package's test binary run again
// (TestSigstopChild, TestStaticChild, TestKeyedChild, TestPipelineChild).
//
// They use the library's API only, with the helpers they share with the root package's tests
// (internal/streamqtest), and start their own redis-servers (internal/redistest). make test
// runs the package beside the others; under -short (make test-short) TestMain skips it whole.
package scenario
