package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxCLIFunc is the most lines a function of internal/cli may have, its
// flag declarations aside: cli only wires a command to its pipeline.
const maxCLIFunc = 60

// pendingCLI are files of internal/cli whose commands' pipelines have not
// moved to their packages yet, exempt until they are thinned. None is left:
// every file is held to maxCLIFunc.
var pendingCLI = []string{}

// flagHelpers register flags on the flag set they are given.
var flagHelpers = []string{"addRemoteFlags", "addTransportFlags", "addNPDFlags", "intVarRange", "choicesVar", "durationVarMin"}

// isFlagCall reports whether e declares or adjusts a flag: a method call on
// a flag set (f.StringVar, cmd.Flags().Bool, f.MarkHidden, f.Lookup(..).Usage
// = ...) or a helper given one.
func isFlagCall(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return slices.Contains(flagHelpers, fn.Name)
	case *ast.SelectorExpr:
		return isFlagSet(fn.X)
	}
	return false
}

// isFlagSet reports whether e is a flag set: f or fs, or cmd.Flags(),
// cmd.PersistentFlags(), or a call on one (f.Lookup("hosts")).
func isFlagSet(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name == "f" || x.Name == "fs"
	case *ast.CallExpr:
		if sel, ok := x.Fun.(*ast.SelectorExpr); ok {
			return sel.Sel.Name == "Flags" || sel.Sel.Name == "PersistentFlags" || isFlagSet(sel.X)
		}
	case *ast.SelectorExpr:
		return isFlagSet(x.X)
	}
	return false
}

// isFlagStmt reports whether s only declares flags: a flag call, taking a
// command's flag set (f := cmd.Flags()), setting a flag's field, or a loop
// over names doing nothing else.
func isFlagStmt(s ast.Stmt) bool {
	switch x := s.(type) {
	case *ast.ExprStmt:
		return isFlagCall(x.X)
	case *ast.AssignStmt:
		if len(x.Rhs) != 1 {
			return false
		}
		if call, ok := x.Rhs[0].(*ast.CallExpr); ok && isFlagSet(call) && len(x.Lhs) == 1 {
			return true // f := cmd.Flags()
		}
		return len(x.Lhs) == 1 && isFlagSet(x.Lhs[0]) // f.Lookup("hosts").Usage = ...
	case *ast.RangeStmt:
		for _, b := range x.Body.List {
			if !isFlagStmt(b) {
				return false
			}
		}
		return len(x.Body.List) > 0
	}
	return false
}

// funcLengths are the lines of every function and function literal in src
// less the lines of its flag declarations, by name@line.
func funcLengths(fset *token.FileSet, f *ast.File) map[string]int {
	out := map[string]int{}
	ast.Inspect(f, func(n ast.Node) bool {
		var body *ast.BlockStmt
		name := "func literal"
		switch x := n.(type) {
		case *ast.FuncDecl:
			body, name = x.Body, x.Name.Name
		case *ast.FuncLit:
			body = x.Body
		default:
			return true
		}
		if body == nil {
			return true
		}
		start, end := fset.Position(n.Pos()).Line, fset.Position(body.Rbrace).Line
		exempt := map[int]bool{}
		ast.Inspect(body, func(m ast.Node) bool {
			s, ok := m.(ast.Stmt)
			if !ok || !isFlagStmt(s) {
				return true
			}
			for l := fset.Position(s.Pos()).Line; l <= fset.Position(s.End()).Line; l++ {
				exempt[l] = true
			}
			return false
		})
		out[fmt.Sprintf("%s@%d", name, start)] = end - start + 1 - len(exempt)
		return true
	})
	return out
}

// TestCLIFunctionsAreShort: no function of internal/cli (pending files
// aside) is over maxCLIFunc lines besides its flag declarations.
func TestCLIFunctionsAreShort(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "internal", "cli", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, p := range files {
		name := filepath.Base(p)
		if strings.HasSuffix(name, "_test.go") || slices.Contains(pendingCLI, name) {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for fn, n := range funcLengths(fset, f) {
			if n > maxCLIFunc {
				t.Errorf("%s: %s is %d lines besides flag declarations (at most %d: cli only wires a command to its pipeline)", name, fn, n, maxCLIFunc)
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d files of internal/cli checked", checked)
	}
}

// TestFuncLengthsCountAllButFlags: a function's flag declarations, one
// line or several, and a loop that only hides flags, are not counted; any
// other line is.
func TestFuncLengthsCountAllButFlags(t *testing.T) {
	const src = `package p

func newCmd() {
	f := cmd.Flags()
	f.StringVar(&o.a, "a", "", "a")
	intVarRange(f, &o.port, "port", 1, 2, 3,
		"more", "usage")
	for _, n := range []string{"x", "y"} {
		f.MarkHidden(n)
	}
	f.Lookup("hosts").Usage = "nodes"
	cmd.Flags().Bool("b", false, "b")
	run()
	other.StringVar(&o.c, "c", "", "c")
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	// 14 lines from func to }, 10 of them flag declarations.
	if got := funcLengths(fset, f)["newCmd@3"]; got != 4 {
		t.Errorf("counted %d lines, want 4 (the func line, run(), other.StringVar and the brace)", got)
	}
}
