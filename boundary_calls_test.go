package streamq_test

import (
	"go/ast"
	"go/token"
)

// clientNames are the names a package declares redis.UniversalClient values under: struct
// fields (reached as x.name, anywhere in the package) and package-level variables (reached as
// name).
type clientNames struct {
	fields, globals map[string]bool
}

// packageClients collects the struct fields and package-level variables of files declared
// with type redis.UniversalClient.
func packageClients(files []*ast.File) clientNames {
	c := clientNames{fields: map[string]bool{}, globals: map[string]bool{}}
	for _, f := range files {
		local := goRedisName(f)
		ast.Inspect(f, func(n ast.Node) bool {
			if st, ok := n.(*ast.StructType); ok {
				addClientFields(c.fields, st.Fields, local)
			}
			return true
		})
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.VAR {
				addClientVars(c.globals, gd, local)
			}
		}
	}
	return c
}

// isClientType reports whether expr is redis.UniversalClient, go-redis imported as local.
func isClientType(expr ast.Expr, local string) bool {
	sel, ok := expr.(*ast.SelectorExpr)
	if !ok || local == "" {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == local && sel.Sel.Name == "UniversalClient"
}

func addClientFields(into map[string]bool, fields *ast.FieldList, local string) {
	if fields == nil {
		return
	}
	for _, fld := range fields.List {
		if isClientType(fld.Type, local) {
			for _, name := range fld.Names {
				into[name.Name] = true
			}
		}
	}
}

func addClientVars(into map[string]bool, gd *ast.GenDecl, local string) {
	for _, spec := range gd.Specs {
		if vs, ok := spec.(*ast.ValueSpec); ok && isClientType(vs.Type, local) {
			for _, name := range vs.Names {
				into[name.Name] = true
			}
		}
	}
}

// clientCalls lists the calls in f of a method of a redis.UniversalClient value: a call
// <expr>.<Method>(...) whose <expr> is a client field (a.rdb, cfg.Client), a package-level
// client variable, or a parameter or variable of the enclosing function declared as a client
// (or defined from one: rdb := a.rdb). Passing a client as an argument is no call of it.
func clientCalls(fset *token.FileSet, f *ast.File, c clientNames) []string {
	local := goRedisName(f)
	var calls []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		locals := funcClients(fd, local, c)
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && c.isClient(sel.X, locals) {
				calls = append(calls, fset.Position(call.Pos()).String()+": call of "+sel.Sel.Name+" on a redis.UniversalClient")
			}
			return true
		})
	}
	return calls
}

// funcClients are the names fd (its function literals included) declares clients under:
// parameters, results, var declarations, and := definitions from a client.
func funcClients(fd *ast.FuncDecl, local string, c clientNames) map[string]bool {
	locals := map[string]bool{}
	addClientFields(locals, fd.Recv, local)
	ast.Inspect(fd, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncType:
			addClientFields(locals, n.Params, local)
			addClientFields(locals, n.Results, local)
		case *ast.GenDecl:
			addClientVars(locals, n, local)
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE && len(n.Lhs) == len(n.Rhs) {
				for i, rhs := range n.Rhs {
					if id, ok := n.Lhs[i].(*ast.Ident); ok && c.isClient(rhs, locals) {
						locals[id.Name] = true
					}
				}
			}
		}
		return true
	})
	return locals
}

// isClient reports whether expr ends in a client's name: a client field selected from any
// value, or a local or package-level client variable.
func (c clientNames) isClient(expr ast.Expr, locals map[string]bool) bool {
	switch e := expr.(type) {
	case *ast.SelectorExpr:
		return c.fields[e.Sel.Name]
	case *ast.Ident:
		return locals[e.Name] || c.globals[e.Name]
	case *ast.ParenExpr:
		return c.isClient(e.X, locals)
	}
	return false
}
