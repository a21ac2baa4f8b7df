// Package doccheck checks the Go blocks of streamq's README.md and docs/*.md: each compiles,
// or is an excerpt of a file that is built and run by its own tests. TestDocsCompile runs it
// (make docs, from make test).
//
// A block is compiled unless a marker comment right before its fence (blank lines between
// allowed) says otherwise:
//
//	<!-- excerpt: examples/migrate/main.go -->
//	<!-- not-go-checked: the reason -->
//
// An excerpt's lines must be consecutive lines of the file (a path relative to the
// repository root), indentation and trailing spaces aside. A skipped block is not checked;
// the test prints it with its reason.
//
// A compiled block is type-checked with go/types against the export data of the real
// packages (go list -export -deps in this module, which requires streamq, its otel module,
// Watermill, go-redis, client_golang and the OpenTelemetry SDK):
//
//   - A block that starts with a package clause is a whole file, compiled alone: every error
//     counts.
//   - Otherwise its leading import declarations are the file's imports, and the rest is
//     top-level declarations if it parses as such, else statements, else declarations then
//     statements. The statements are the body of a function whose results follow the
//     block's return statements (none or a bare return: none; `return err`: error;
//     `return x, err`: (any, error)), so a block may end without its final return.
//   - The package names of Imports that the block uses (as in time.Second) and neither
//     imports nor declares are imported for it; the names of package scaffold (ctx, err,
//     client, logger, pub, sub, router, msg, ...) are declared around it, those the block
//     declares at the top level left out.
//   - "declared and not used" and "imported and not used" are no errors: a snippet shows
//     what it declares. Every other error fails the block, reported at its Markdown line.
package doccheck
