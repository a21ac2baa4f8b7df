// Package e2e holds the end-to-end test of the streamq dashboard: headless Chromium (Debian's
// chromium package, driven through chromedp) against the dashboard on a test redis-server
// with real traffic. It is a module of its own because chromedp needs a newer Go than the
// library's go.mod states.
//
//	cd e2e && go test -race ./...
//
// The test skips when /usr/bin/chromium is missing, unless STREAMQ_REQUIRE_BROWSER=1 (then
// it fails). STREAMQ_SCREENSHOT=path writes a PNG of the topic page with live traffic (a
// relative path from the repository root): STREAMQ_SCREENSHOT=docs/dashboard.png make e2e;
// STREAMQ_SCREENSHOTS=dir writes the Topics page (the whole page), the topic page and the
// group page in an incident (TestDashboardIncident) as dir/dashboard-incident.png,
// dashboard-incident-topic.png and dashboard-incident-group.png, the Topics page, the topic
// page and the group page of the cause with Redis at maxmemory (TestDashboardAtMaxmemory) as
// dashboard-full.png, dashboard-full-topic.png and dashboard-full-group.png, and a group in a
// downstream outage (TestDashboardShowsAnOutage) as dashboard-outage.png. The window is
// 1366x768.
package e2e
