package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// mutexPath is the import path of the package whose types replace
// sync.Mutex and sync.RWMutex. It imports package detect, so a binary
// that links it reads LOCKSMITH_DETECT at start-up; selectPackages checks
// that every measured test binary links both.
const mutexPath = "github.com/locksmith-go/locksmith/mutex"

// mutexAlias is the name the rewritten files import mutexPath under: a
// name that no real code declares, so the import cannot collide with a
// local "mutex" (a variable, a field, or a package-level name in another
// file of the package, which an import named mutex would conflict with).
const mutexAlias = "locksmithmutex"

// replaced maps the sync types that are rewritten to their replacements
// in mutexPath.
var replaced = map[string]string{"Mutex": "Mutex", "RWMutex": "RWMutex"}

// counts says how many references to each sync type a rewrite replaced.
type counts struct {
	Files, Mutex, RWMutex int
}

func (c *counts) add(d counts) {
	c.Files += d.Files
	c.Mutex += d.Mutex
	c.RWMutex += d.RWMutex
}

func (c counts) String() string {
	return fmt.Sprintf("%d files, %d sync.Mutex, %d sync.RWMutex", c.Files, c.Mutex, c.RWMutex)
}

// rewriteFile replaces the references to sync.Mutex and sync.RWMutex in
// the Go source src with locksmith's mutex.Mutex and mutex.RWMutex, and
// imports locksmith's mutex package for them. The import of sync stays
// when the file still uses sync for anything else (WaitGroup, Once,
// Locker, NewCond, ...); otherwise it becomes the import of mutex, in the
// same place, so that the comments around the imports stay where they
// were. It returns the new source and what it replaced; a file that
// refers to neither type comes back unchanged, with zero counts.
//
// The rewrite is syntactic: a selector sync.Mutex where sync is the
// file's import of package sync, not a local variable of that name (the
// parser's object resolution tells them apart within the file, and a
// package-level declaration named like an import of the same package
// does not compile). A file that imports sync with a dot is refused:
// there, Mutex alone may be sync's or a local type, and only type
// checking would tell. Type checking every file (go/types) was rejected:
// it needs each project's dependencies loaded, for no gain on the code
// that imports sync by name, which is all of the projects measured.
//
// It prints with go/printer, then gofmt's formatting (go/format), so a
// rewritten file reads as if written by hand.
func rewriteFile(filename string, src []byte) ([]byte, counts, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.ParseComments)
	if err != nil {
		return nil, counts{}, err
	}
	var syncSpec *ast.ImportSpec
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		for _, s := range gd.Specs {
			is := s.(*ast.ImportSpec)
			if p, _ := strconv.Unquote(is.Path.Value); p == "sync" {
				syncSpec = is
			}
		}
	}
	if syncSpec == nil {
		return src, counts{}, nil
	}
	name := "sync"
	if syncSpec.Name != nil {
		name = syncSpec.Name.Name
	}
	switch name {
	case "_":
		return src, counts{}, nil
	case ".":
		return nil, counts{}, fmt.Errorf("%s: imports sync with a dot; only type checking could tell its Mutex from a local one", filename)
	}

	var n counts
	stillSync := false
	ast.Inspect(f, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.Ident:
			if x.Name == mutexAlias {
				err = fmt.Errorf("%s: declares or uses %s, the name the rewrite imports %s under", filename, mutexAlias, mutexPath)
			}
		case *ast.SelectorExpr:
			id, ok := x.X.(*ast.Ident)
			if !ok || id.Name != name || id.Obj != nil {
				return true
			}
			to, ok := replaced[x.Sel.Name]
			if !ok {
				stillSync = true
				return true
			}
			id.Name, x.Sel.Name = mutexAlias, to
			if to == "Mutex" {
				n.Mutex++
			} else {
				n.RWMutex++
			}
			return false
		}
		return true
	})
	if err != nil {
		return nil, counts{}, err
	}
	if n.Mutex+n.RWMutex == 0 {
		return src, counts{}, nil
	}
	n.Files = 1

	if !stillSync {
		// The import of sync turns into the import of mutex: same spec,
		// same position, same comments.
		syncSpec.Name = &ast.Ident{NamePos: syncSpec.Path.Pos(), Name: mutexAlias}
		syncSpec.Path.Value = strconv.Quote(mutexPath)
	}
	var buf bytes.Buffer
	cfg := printer.Config{Mode: printer.UseSpaces | printer.TabIndent, Tabwidth: 8}
	if err := cfg.Fprint(&buf, fset, f); err != nil {
		return nil, counts{}, err
	}
	out := buf.Bytes()
	if stillSync {
		// The import of mutex goes in as text, on the line after the
		// import of sync, in the printed file: a spec added to the syntax
		// tree has no position, and go/printer places such a node by the
		// positions around it, which can put it after a comment that
		// follows the import list or on the line of another spec.
		if out, err = insertImport(filename, out); err != nil {
			return nil, counts{}, err
		}
	}
	// The result must be valid Go, formatted as gofmt would: a rewrite
	// that broke a file would otherwise show up later as a build failure
	// that looks like a finding about locksmith.
	out, err = format.Source(out)
	if err != nil {
		return nil, counts{}, fmt.Errorf("rewritten %s is not valid Go: %w", filename, err)
	}
	return out, n, nil
}

// insertImport adds the import of mutexPath to src, right after its import
// of sync: within the same parenthesised list, or as a declaration of its
// own after a single-line import.
func insertImport(filename string, src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	for _, gd := range f.Decls {
		gd := gd.(*ast.GenDecl)
		for _, sp := range gd.Specs {
			is := sp.(*ast.ImportSpec)
			if p, _ := strconv.Unquote(is.Path.Value); p != "sync" {
				continue
			}
			at, line := is.End(), "\n\t"+mutexAlias+" "+strconv.Quote(mutexPath)
			if !gd.Lparen.IsValid() {
				at, line = gd.End(), "\nimport "+mutexAlias+" "+strconv.Quote(mutexPath)
			}
			off := fset.Position(at).Offset
			return slices.Concat(src[:off], []byte(line), src[off:]), nil
		}
	}
	return nil, fmt.Errorf("%s: the import of sync is gone after printing", filename)
}

// rewriteTree rewrites, in place, every .go file under dir that the go
// command would compile as part of the module: it skips testdata, vendor,
// and directories whose names start with "." or "_", as the go command
// does, since the files there are test inputs or not packages at all.
func rewriteTree(dir string) (counts, error) {
	var total counts
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			base := d.Name()
			if path != dir && (base == "testdata" || base == "vendor" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || !d.Type().IsRegular() {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out, n, err := rewriteFile(path, src)
		if err != nil {
			return err
		}
		if n.Files == 0 {
			return nil
		}
		total.add(n)
		return os.WriteFile(path, out, 0o644)
	})
	if err == nil && total.Files == 0 {
		err = errors.New("no file refers to sync.Mutex or sync.RWMutex")
	}
	return total, err
}
