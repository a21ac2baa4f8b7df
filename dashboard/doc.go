// Package dashboard is a web dashboard for streamq: an http.Handler that shows topics,
// partitions, consumer groups, lag and dead letters in a browser, and (when enabled) replays
// and deletes dead letters and resets group offsets. It is a thin HTTP layer over package
// admin: the pages are plain HTML, CSS and JavaScript embedded in the binary (no CDN, no
// build step), and poll a JSON API that returns the same data as admin.
//
// Mount it in any service:
//
//	h, err := dashboard.New(redisClient, dashboard.Options{})
//	if err != nil { ... }
//	defer h.Close()
//	mux.Handle("/streamq/", http.StripPrefix("/streamq", h))
//
// or run it standalone with "streamq ui". Safety: the dashboard is read-only unless
// Options.AllowWrites is set; Options.Token or Options.BasicAuthUser/BasicAuthPassword
// require credentials (compared in constant time); every write must be a same-origin POST
// with a JSON body and the per-handler CSRF token the page reads from GET api/session; every
// write is logged; stored data (payloads, metadata, reasons) is only ever put into the page
// as text, under a strict Content-Security-Policy.
//
// Rates (publish and consume throughput) come from a sampler inside the Handler: while a
// topic is viewed it reads the topic's counters (admin.TopicCounters) every SampleInterval
// into a ring that keeps SampleWindow of history, so every viewer sees the same history and
// a reload does not lose it. Close stops it.
package dashboard
