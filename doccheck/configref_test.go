package doccheck_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/dashboard"
)

// configRoots are the configuration structs docs/configuration.md documents; the groups of
// the root package they hold are found from their fields.
var configRoots = []reflect.Type{
	reflect.TypeFor[streamq.PublisherConfig](),
	reflect.TypeFor[streamq.SubscriberConfig](),
	reflect.TypeFor[admin.Options](),
	reflect.TypeFor[dashboard.Options](),
}

// TestConfigurationReferenceCoversEveryField: docs/configuration.md has one section per
// configuration struct and group (a heading "## `Name`" or "### `Name`", admin.Options as
// "admin.Options"), whose table lists every exported field of it, each with a default, and
// no field it lacks; and no such section names a type that is not a configuration struct.
func TestConfigurationReferenceCoversEveryField(t *testing.T) {
	md, err := os.ReadFile(filepath.Join(root, "docs", "configuration.md"))
	require.NoError(t, err)
	sections := configSections(string(md))
	structs := configStructs()
	for name, fields := range structs {
		rows, ok := sections[name]
		if !assert.True(t, ok, "docs/configuration.md has no section \"## `%s`\"", name) {
			continue
		}
		var documented []string
		for _, r := range rows {
			assert.NotEmpty(t, strings.TrimSpace(r.def), "docs/configuration.md: %s.%s has no default", name, r.names)
			documented = append(documented, r.names...)
		}
		for _, f := range fields {
			assert.Contains(t, documented, f, "docs/configuration.md: field %s.%s is not documented", name, f)
		}
		for _, d := range documented {
			assert.Contains(t, fields, d, "docs/configuration.md: %s has no field %s", name, d)
		}
	}
	for name := range sections {
		_, ok := structs[name]
		assert.True(t, ok, "docs/configuration.md: section %q is not a configuration struct", name)
	}
}

// configStructs maps the name of every configuration struct (the roots, and the struct types
// of the root package their fields hold, recursively) to its exported fields.
func configStructs() map[string][]string {
	out := map[string][]string{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		name := typeName(t)
		if _, seen := out[name]; seen {
			return
		}
		out[name] = nil
		for f := range t.Fields() {
			if !f.IsExported() {
				continue
			}
			out[name] = append(out[name], f.Name)
			ft := f.Type
			if ft.Kind() == reflect.Map {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && ft.PkgPath() == reflect.TypeFor[streamq.PublisherConfig]().PkgPath() {
				walk(ft)
			}
		}
	}
	for _, t := range configRoots {
		walk(t)
	}
	return out
}

// typeName is a root-package type's name, or pkg.Name for another package's.
func typeName(t reflect.Type) string {
	if t.PkgPath() == reflect.TypeFor[streamq.PublisherConfig]().PkgPath() {
		return t.Name()
	}
	return t.String()
}

// configRow is one table row of a section: the field names of its first cell, its default.
type configRow struct {
	names []string
	def   string
}

var (
	configHeading = regexp.MustCompile("^#{2,3} `([A-Za-z.]+)`$")
	backticked    = regexp.MustCompile("`([A-Za-z]+)`")
)

// configSections maps each "## `Name`" section of md to its table rows.
func configSections(md string) map[string][]configRow {
	out := map[string][]configRow{}
	current := ""
	for line := range strings.SplitSeq(md, "\n") {
		if m := configHeading.FindStringSubmatch(line); m != nil {
			current = m[1]
			out[current] = nil
			continue
		}
		if strings.HasPrefix(line, "#") {
			current = ""
			continue
		}
		if current == "" || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		var names []string
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			if !slices.Contains(names, m[1]) {
				names = append(names, m[1])
			}
		}
		out[current] = append(out[current], configRow{names: names, def: cells[2]})
	}
	return out
}
