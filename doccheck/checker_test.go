package doccheck_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/doccheck"
)

// page is a Markdown page with one Go block, its fence on line 3: block line n is line 3+n.
func page(src string) string {
	return "# Title\n\n```go\n" + strings.TrimPrefix(src, "\n") + "```\n\nMore text.\n"
}

// checkPage checks the only Go block of md.
func checkPage(t *testing.T, md string) error {
	t.Helper()
	blocks, err := doccheck.Blocks("page.md", md)
	require.NoError(t, err)
	require.Len(t, blocks, 1)
	return newChecker(t).Check(blocks[0])
}

func TestCheckerPasses(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"statements with return err, unused variables", `
sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{Client: client, ConsumerGroup: "g"}, logger)
if err != nil {
	return err
}
wait := 2 * time.Second
`},
		{"statements without a return", `
sub.Pause()
checkpoint()
sub.Resume()
`},
		{"a bare return", `
if sub.Paused() {
	return
}
`},
		{"return x, err", `
n, err := a.DLQSize(ctx, "orders")
if err != nil {
	return nil, err
}
return n, nil
`},
		{"the block's own imports, one unused, one under another name", `
import (
	"fmt"

	wm "github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"
)

rc := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
_ = wm.NewStdLogger(false, false)
_ = rc
`},
		{"declarations", `
func handle(msg *message.Message) error {
	if _, ok := streamq.PartitionFromCtx(msg.Context()); !ok {
		return errors.New("not a streamq delivery")
	}
	return nil
}
`},
		{"declarations that replace scaffold names", `
var logger = watermill.NewStdLogger(false, false)

func checkpoint() error { return nil }

func handleOrder(msg *message.Message) error { return checkpoint() }
`},
		{"declarations then statements", `
type order struct{ ID int }

func handle(msg *message.Message) error {
	var o order
	return json.Unmarshal(msg.Payload, &o)
}

router.AddConsumerHandler("orders", "orders", sub, handle)
`},
		{"a whole file", `
package main

import (
	"fmt"

	"github.com/streamq-dev/streamq"
)

func main() {
	fmt.Println(streamq.DLQTopic("orders"))
}
`},
		{"the OpenTelemetry SDK", `
tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter))
_ = streamqotel.New(streamqotel.Config{TracerProvider: tp})
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.NoError(t, checkPage(t, page(tc.src)))
		})
	}
}

func TestCheckerFails(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string // in the error, in order
	}{
		{"an undefined name", `
sub.Pause()
nope.Resume()
`, []string{"page.md:3: the ```go block does not compile (as statements):",
			"block line 2 (page.md:5): undefined: nope", "\t\tnope.Resume()"}},
		{"a wrong type", `
sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
	Client:        client,
	ConsumerGroup: 7,
}, logger)
`, []string{"block line 3 (page.md:6): cannot use 7 (untyped int constant) as string value", "ConsumerGroup: 7,"}},
		{"a method that does not exist", `
n := pub.Count()
`, []string{"block line 1 (page.md:4): pub.Count undefined"}},
		{"a syntax error", `
sub.Pause()
if sub.Paused() {
	sub.Resume(
}
`, []string{"page.md:3: the ```go block does not parse as Go:", "block line 4 (page.md:7):"}},
		{"declarations then statements, an error in each", `
func handle(msg *message.Message) error {
	return msg.Nope()
}

router.AddConsumerHandler("orders", "orders", sub, handle, 5)
`, []string{"does not compile (as declarations then statements):", "block line 2 (page.md:5): msg.Nope undefined",
			"block line 5 (page.md:8): too many arguments in call to router.AddConsumerHandler"}},
		{"declarations then statements with a syntax error", `
func handle(msg *message.Message) error {
	return nil
}

router.AddConsumerHandler("orders", "orders", sub, handle
sub.Pause()
`, []string{"does not parse as Go:", "block line 5 (page.md:8): missing ',' before newline in argument list"}},
		{"an unclosed brace", `
for {
	sub.Pause()
`, []string{"does not parse as Go", "after the block's last line: expected '}', found 'EOF'"}},
		{"a wrong return", `
return 5
`, []string{"block line 1 (page.md:4): cannot use 5 (constant of type int) as error value in return statement"}},
		{"unused imports of a whole file", `
package main

import "fmt"

func main() {}
`, []string{"does not compile (as a whole file)", `block line 3 (page.md:6): "fmt" imported and not used`}},
		{"a package no module of doccheck provides", `
import "example.com/nowhere/pkg"

pkg.Do()
`, []string{"block line 1 (page.md:4):", "no module of doccheck/go.mod provides package example.com/nowhere/pkg"}},
		{"a feature newer than the root module's go directive", `
p := new(42)
`, []string{"block line 1 (page.md:4):", "requires go1.26 or later"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkPage(t, page(tc.src))
			require.Error(t, err)
			var be *doccheck.BlockError
			require.ErrorAs(t, err, &be)
			t.Log(err)
			assertInOrder(t, err.Error(), tc.want)
		})
	}
}

// assertInOrder asserts that s holds each of want, one after the other.
func assertInOrder(t *testing.T, s string, want []string) {
	t.Helper()
	rest := s
	for _, w := range want {
		i := strings.Index(rest, w)
		if !assert.GreaterOrEqual(t, i, 0, "%q not in (the rest of)\n%s", w, s) {
			return
		}
		rest = rest[i+len(w):]
	}
}

func TestExcerpt(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "ex"), 0o750))
	require.NoError(t, os.WriteFile(filepath.Join(root, "ex", "main.go"), []byte(`package main

func run() error {
	oldHandler := router.AddConsumerHandler("a", topic, oldSub, handle("old"))
	router.AddConsumerHandler("b", topic, newSub, handle("new"))   
	return nil
}
`), 0o600))
	excerpt := func(file, src string) doccheck.Block {
		blocks, err := doccheck.Blocks("page.md", "1. Step:\n\n   <!-- excerpt: "+file+" -->\n   ```go\n"+src+"   ```\n")
		require.NoError(t, err)
		require.Len(t, blocks, 1)
		require.Equal(t, doccheck.Excerpt, blocks[0].Marker.Kind)
		return blocks[0]
	}
	good := "   oldHandler := router.AddConsumerHandler(\"a\", topic, oldSub, handle(\"old\"))\n" +
		"   router.AddConsumerHandler(\"b\", topic, newSub, handle(\"new\"))\n"
	require.NoError(t, doccheck.CheckExcerpt(root, excerpt("ex/main.go", good)))

	drifted := "   oldHandler := router.AddConsumerHandler(\"a\", topic, oldSub, handle(\"old\"))\n" +
		"   router.AddConsumerHandler(\"c\", topic, newSub, handle(\"new\"))\n"
	err := doccheck.CheckExcerpt(root, excerpt("ex/main.go", drifted))
	assertInOrder(t, fmtErr(err), []string{"page.md:4: the ```go block is not an excerpt of ex/main.go:",
		"block line 2 (page.md:6): the block's lines before this one are ex/main.go:4-4; this line does not follow them there",
		`router.AddConsumerHandler("c"`})

	err = doccheck.CheckExcerpt(root, excerpt("ex/main.go", "   return errors.New(\"x\")\n"))
	assertInOrder(t, fmtErr(err), []string{"block line 1 (page.md:5): this line is not in ex/main.go"})

	err = doccheck.CheckExcerpt(root, excerpt("ex/gone.go", good))
	assertInOrder(t, fmtErr(err), []string{"page.md:3: open ", "no such file or directory"})

	err = doccheck.CheckExcerpt(root, excerpt("../outside.go", good))
	assertInOrder(t, fmtErr(err), []string{"page.md:3: the excerpt's path is relative to the repository root"})
}

// fmtErr is err's message, "" for nil.
func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestBlocks(t *testing.T) {
	md := strings.Join([]string{
		"Intro",        // 1
		"```console",   // 2
		"$ go test",    // 3
		"```",          // 4
		"````markdown", // 5
		"```go",        // 6: text of the markdown block
		"````",         // 7
		"1. A step:",   // 8
		"",             // 9
		"   <!-- excerpt: examples/migrate/main.go -->", // 10
		"",                   // 11
		"   ```go",           // 12
		"   if err != nil {", // 13
		"   \treturn err",    // 14
		"   }",               // 15
		"   ```",             // 16
		"<!-- not-go-checked: shows the wrong program -->", // 17
		"```Go",     // 18
		"x := 1",    // 19
		"```",       // 20
		"~~~golang", // 21
		"y := 2",    // 22
		"~~~",       // 23
	}, "\n")
	blocks, err := doccheck.Blocks("page.md", md)
	require.NoError(t, err)
	require.Equal(t, []doccheck.Block{
		{File: "page.md", Line: 12, Source: "if err != nil {\n\treturn err\n}",
			Marker: doccheck.Marker{Kind: doccheck.Excerpt, Arg: "examples/migrate/main.go", Line: 10}},
		{File: "page.md", Line: 18, Source: "x := 1",
			Marker: doccheck.Marker{Kind: doccheck.Skipped, Arg: "shows the wrong program", Line: 17}},
		{File: "page.md", Line: 21, Source: "y := 2"},
	}, blocks)
}

func TestBlocksFail(t *testing.T) {
	for _, tc := range []struct{ name, md, want string }{
		{"a fence never closed", "text\n```go\nx := 1\n", "page.md:2: code fence ``` is never closed"},
		{"a marker before text", "<!-- excerpt: a.go -->\ntext\n```go\nx\n```\n", "page.md:1: marker comment is not right before a ```go block"},
		{"a marker before another language", "<!-- excerpt: a.go -->\n```console\nx\n```\n", "page.md:1: marker comment is not right before"},
		{"a marker at the end", "text\n<!-- not-go-checked: why -->\n", "page.md:2: marker comment is not right before"},
		{"a marker without its colon", "<!-- excerpt a.go -->\n```go\nx\n```\n", `page.md:1: marker "excerpt" needs a colon and its argument`},
		{"a marker without its reason", "<!-- not-go-checked: -->\n```go\nx\n```\n", `marker "not-go-checked" needs a colon and its argument`},
		{"a marker with text around it", "See <!-- excerpt: a.go -->\n```go\nx\n```\n", "page.md:1: a marker comment is alone on its line"},
		{"a marker after inline code", "Use `<!-- excerpt: path -->`. <!-- excerpt: a.go -->\n```go\nx\n```\n", "page.md:1: a marker comment is alone on its line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := doccheck.Blocks("page.md", tc.md)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestDocFiles(t *testing.T) {
	root := t.TempDir()
	_, err := doccheck.DocFiles(root)
	require.Error(t, err, "no README.md")
	require.NoError(t, os.WriteFile(filepath.Join(root, "README.md"), nil, 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "docs", "sub"), 0o750))
	for _, name := range []string{"docs/b.md", "docs/a.md", "docs/notes.txt", "docs/sub/c.md"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), nil, 0o600))
	}
	files, err := doccheck.DocFiles(root)
	require.NoError(t, err)
	assert.Equal(t, []string{"README.md", "docs/a.md", "docs/b.md"}, files)
}

// TestImportsAreModuleDependencies: scaffold/deps.go imports every path of the import
// table, so go mod tidy keeps their modules required.
func TestImportsAreModuleDependencies(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("scaffold", "deps.go"), nil, parser.ImportsOnly)
	require.NoError(t, err)
	var deps, table []string
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		require.NoError(t, err)
		deps = append(deps, p)
	}
	for _, p := range doccheck.Imports {
		table = append(table, p)
	}
	sort.Strings(deps)
	sort.Strings(table)
	assert.Equal(t, table, deps)
}

// TestScaffoldNamesAreNotPackageNames: a package-level name of the scaffold cannot be
// imported under the same name in a snippet's file.
func TestScaffoldNamesAreNotPackageNames(t *testing.T) {
	for name := range newChecker(t).ScaffoldNames() {
		_, clash := doccheck.Imports[name]
		assert.False(t, clash, "scaffold name %s is a package name of doccheck.Imports", name)
	}
}
