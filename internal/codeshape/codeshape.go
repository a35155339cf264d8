// Package codeshape holds the size rules of scalelab's code that
// CONTRIBUTING.md states: a file of the module's code (tests apart) stays
// within MaxFileLines lines and a function within MaxFuncLines. Its test
// checks every file of the module.
package codeshape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
)

// The limits.
const (
	MaxFileLines = 800
	MaxFuncLines = 100
)

// Check returns what in the Go source src (named name) is over a limit:
// the file, or each function or method, with its length.
func Check(name string, src []byte) ([]string, error) {
	fs := token.NewFileSet()
	f, err := parser.ParseFile(fs, name, src, 0)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", name, err)
	}
	var over []string
	if n := fs.File(f.Pos()).LineCount(); n > MaxFileLines {
		over = append(over, fmt.Sprintf("%s: %d lines, more than %d: split it by what its parts do", name, n, MaxFileLines))
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		if n := fs.Position(fd.End()).Line - fs.Position(fd.Pos()).Line + 1; n > MaxFuncLines {
			over = append(over, fmt.Sprintf("%s:%d: func %s is %d lines, more than %d: give a part of it a name of its own",
				name, fs.Position(fd.Pos()).Line, fd.Name.Name, n, MaxFuncLines))
		}
	}
	return over, nil
}
