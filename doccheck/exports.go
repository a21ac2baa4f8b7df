package doccheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"strings"
)

// exports is the export data of packages, from `go list -export -deps` in the doccheck
// module: what the compiler wrote for each (building it when the cache lacks it).
type exports struct {
	dir  string // the doccheck module
	fset *token.FileSet
	pkgs map[string]listedPackage // by import path
	imp  types.Importer
}

// listedPackage is what `go list` says of a package.
type listedPackage struct {
	ImportPath string
	Name       string
	Export     string // the export data file
	Error      *struct{ Err string }
}

func newExports(fset *token.FileSet, dir string) *exports {
	e := &exports{dir: dir, fset: fset, pkgs: map[string]listedPackage{}}
	e.imp = importer.ForCompiler(fset, "gc", e.open)
	return e
}

// importer is the gc importer reading the listed export data.
func (e *exports) importer() types.Importer { return e.imp }

// names returns the package names by import path.
func (e *exports) names() map[string]string {
	out := make(map[string]string, len(e.pkgs))
	for path, p := range e.pkgs {
		out[path] = p.Name
	}
	return out
}

// need lists the paths not listed yet, with their dependencies. A package go list cannot
// load is listed with its error, which its import reports.
func (e *exports) need(paths []string) error {
	var missing []string
	for _, p := range paths {
		if _, ok := e.pkgs[p]; !ok && p != "C" {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	args := append([]string{"list", "-e", "-export", "-deps", "-json=ImportPath,Name,Export,Error"}, missing...)
	cmd := exec.Command("go", args...)
	cmd.Dir = e.dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("doccheck: go %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return e.decode(out)
}

// decode reads the JSON stream of go list.
func (e *exports) decode(out []byte) error {
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("doccheck: go list output: %w", err)
		}
		e.pkgs[p.ImportPath] = p
	}
}

// open opens the export data of the package at path, for the importer.
func (e *exports) open(path string) (io.ReadCloser, error) {
	p, ok := e.pkgs[path]
	switch {
	case !ok:
		return nil, fmt.Errorf("package %s was not listed", path)
	case p.Error != nil:
		msg := strings.TrimSpace(p.Error.Err)
		if strings.Contains(msg, "no required module provides") {
			msg = "no module of doccheck/go.mod provides package " + path +
				": import it in doccheck/scaffold/deps.go, then go mod tidy in doccheck"
		}
		return nil, errors.New(msg)
	case p.Export == "":
		return nil, fmt.Errorf("package %s has no export data (it does not build)", path)
	}
	f, err := os.Open(p.Export)
	if err != nil {
		return nil, fmt.Errorf("doccheck: %w", err)
	}
	return f, nil
}
