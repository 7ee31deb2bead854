// Package apidoc holds the test that keeps the public API readable without
// the internals: what go doc prints for a public package names no internal
// package and no unexported identifier in its declarations, no internal
// package in its doc comments, and every exported identifier, method,
// struct field and interface method has a doc comment.
package apidoc_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	module = "github.com/locksmith-go/locksmith"
	root   = "../../.." // the library module's directory
)

// publicPackages returns the directories, relative to root, of the
// library's public packages: every directory with non-test Go files
// outside internal/, the bench module, the example programs and testdata.
func publicPackages(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
		case strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata",
			rel == "internal", rel == "bench", rel == "examples":
			return filepath.SkipDir
		default:
			if _, err := build.Default.ImportDir(path, 0); err == nil {
				dirs = append(dirs, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mutex", "monitor", "condvar", "detect", "deadlock", "misuse"} {
		if !slices.Contains(dirs, want) {
			t.Fatalf("the walk of %s finds the public packages %q, without %s", root, dirs, want)
		}
	}
	return dirs
}

// pkg is one public package as go doc sees it in this build.
type pkg struct {
	path  string
	fset  *token.FileSet
	files []*ast.File
	doc   *doc.Package
	// unexported holds the package's unexported top-level names.
	unexported map[string]bool
	// internal maps each file to the names under which it imports an
	// internal package.
	internal map[*ast.File]map[string]string
}

func load(t *testing.T, dir string) *pkg {
	t.Helper()
	bp, err := build.Default.ImportDir(filepath.Join(root, dir), 0)
	if err != nil {
		t.Fatal(err)
	}
	p := &pkg{
		path:       module + "/" + dir,
		fset:       token.NewFileSet(),
		unexported: map[string]bool{},
		internal:   map[*ast.File]map[string]string{},
	}
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(p.fset, filepath.Join(bp.Dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		p.files = append(p.files, f)
		imps := map[string]string{}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !strings.Contains(path, "/internal/") && !strings.HasSuffix(path, "/internal") {
				continue
			}
			name := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			imps[name] = path
		}
		p.internal[f] = imps
		for _, d := range f.Decls {
			for _, name := range declNames(d) {
				if !ast.IsExported(name) && name != "_" {
					p.unexported[name] = true
				}
			}
		}
	}
	// doc.New filters the files' declarations down to what go doc shows;
	// it works on copies, so the files above keep every declaration.
	d, err := doc.NewFromFiles(p.fset, p.files, p.path)
	if err != nil {
		t.Fatal(err)
	}
	p.doc = d
	return p
}

// declNames returns the top-level names d declares (functions only, not
// methods).
func declNames(d ast.Decl) []string {
	var names []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			names = append(names, d.Name.Name)
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				names = append(names, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					names = append(names, n.Name)
				}
			}
		}
	}
	return names
}

// fileOf returns the file that holds n.
func (p *pkg) fileOf(n ast.Node) *ast.File {
	for _, f := range p.files {
		if f.FileStart <= n.Pos() && n.Pos() <= f.FileEnd {
			return f
		}
	}
	return nil
}

// undocumented returns the exported names of the package that have no doc
// comment: identifiers, methods, fields of exported struct types and
// methods of exported interfaces. A constant or variable in a group is
// documented by the group's comment or its own; an embedded field is
// documented by its type.
func (p *pkg) undocumented() []string {
	var missing []string
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			if v.Doc != "" {
				continue
			}
			for _, s := range v.Decl.Specs {
				s := s.(*ast.ValueSpec)
				if s.Doc == nil && s.Comment == nil {
					for _, n := range s.Names {
						if n.IsExported() {
							missing = append(missing, n.Name)
						}
					}
				}
			}
		}
	}
	funcs := func(prefix string, fs []*doc.Func) {
		for _, f := range fs {
			if f.Doc == "" {
				missing = append(missing, prefix+f.Name)
			}
		}
	}
	values(p.doc.Consts)
	values(p.doc.Vars)
	funcs("", p.doc.Funcs)
	for _, typ := range p.doc.Types {
		if typ.Doc == "" {
			missing = append(missing, typ.Name)
		}
		values(typ.Consts)
		values(typ.Vars)
		funcs("", typ.Funcs)
		funcs(typ.Name+".", typ.Methods)
		for _, s := range typ.Decl.Specs {
			ts := s.(*ast.TypeSpec)
			var fields *ast.FieldList
			switch tt := ts.Type.(type) {
			case *ast.StructType:
				fields = tt.Fields
			case *ast.InterfaceType:
				fields = tt.Methods
			}
			if fields == nil {
				continue
			}
			for _, f := range fields.List {
				if f.Doc != nil || f.Comment != nil {
					continue
				}
				for _, n := range f.Names {
					if n.IsExported() {
						missing = append(missing, typ.Name+"."+n.Name)
					}
				}
			}
		}
	}
	return missing
}

// decls returns every exported declaration go doc prints for the
// package, as go/doc filtered it.
func (p *pkg) decls() []ast.Decl {
	var ds []ast.Decl
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			ds = append(ds, v.Decl)
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			ds = append(ds, f.Decl)
		}
	}
	values(p.doc.Consts)
	values(p.doc.Vars)
	funcs(p.doc.Funcs)
	for _, typ := range p.doc.Types {
		ds = append(ds, typ.Decl)
		values(typ.Consts)
		values(typ.Vars)
		funcs(typ.Funcs)
		funcs(typ.Methods)
	}
	return ds
}

// leaks returns, for each exported declaration, the internal names it
// shows: a selector on an internal package, an unexported top-level name
// of the package (a type, function, variable or constant a reader cannot
// look up), an unexported struct field that go doc prints (in a variable's
// struct type, which go/doc does not filter), and a comment inside the
// declaration that names an internal package.
func (p *pkg) leaks(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, d := range p.decls() {
		f := p.fileOf(d)
		imps := p.internal[f]
		text := p.render(t, d)
		where := fmt.Sprintf("%s: %s", p.fset.Position(d.Pos()), firstLine(text))
		skip := map[*ast.Ident]bool{}
		ast.Inspect(d, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				skip[n.Name] = true
				if n.Body != nil {
					// go doc prints no function body.
					ast.Inspect(n.Type, func(m ast.Node) bool { return p.inspectIdent(m, skip, imps, where, &out) })
					if n.Recv != nil {
						ast.Inspect(n.Recv, func(m ast.Node) bool { return p.inspectIdent(m, skip, imps, where, &out) })
					}
					return false
				}
			case *ast.Field:
				for _, name := range n.Names {
					skip[name] = true
					if !name.IsExported() && name.Name != "_" {
						if _, isFunc := d.(*ast.FuncDecl); !isFunc {
							out = append(out, fmt.Sprintf("%s: shows the unexported field %s", where, name.Name))
						}
					}
				}
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok {
					skip[id] = true // a field name in a composite literal
				}
			}
			return p.inspectIdent(n, skip, imps, where, &out)
		})
		for name := range imps {
			if regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\.`).MatchString(text) {
				out = append(out, fmt.Sprintf("%s: its text names %s.", where, name))
			}
		}
		if strings.Contains(text, "internal/") {
			out = append(out, fmt.Sprintf("%s: names an internal/ path", where))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// inspectIdent flags n if it is a selector on an internal package or an
// unexported top-level name of the package.
func (p *pkg) inspectIdent(n ast.Node, skip map[*ast.Ident]bool, imps map[string]string, where string, out *[]string) bool {
	switch n := n.(type) {
	case *ast.SelectorExpr:
		if x, ok := n.X.(*ast.Ident); ok {
			if path, ok := imps[x.Name]; ok {
				*out = append(*out, fmt.Sprintf("%s: names %s.%s, of %s", where, x.Name, n.Sel.Name, path))
			}
			skip[x] = true
		}
		skip[n.Sel] = true
	case *ast.Ident:
		if !skip[n] && p.unexported[n.Name] {
			*out = append(*out, fmt.Sprintf("%s: names the unexported %s", where, n.Name))
		}
	}
	return true
}

// render prints d as go doc does (without function bodies), with the
// comments inside it.
func (p *pkg) render(t *testing.T, d ast.Decl) string {
	t.Helper()
	if fd, ok := d.(*ast.FuncDecl); ok {
		cp := *fd
		cp.Body, cp.Doc = nil, nil
		d = &cp
	}
	var b bytes.Buffer
	if err := (&printer.Config{Mode: printer.UseSpaces, Tabwidth: 8}).Fprint(&b, p.fset, &printer.CommentedNode{Node: d, Comments: p.fileOf(d).Comments}); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	// The declaration's own doc comment is prose, and may name what a
	// profile or a stack shows; only what is inside the declaration is
	// checked here.
	if gd, ok := d.(*ast.GenDecl); ok && gd.Doc != nil {
		_, text, _ = strings.Cut(text, gd.Tok.String())
	}
	return text
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

// TestPublicAPINamesNoInternals: no exported declaration of a public
// package, as go doc prints it, names an internal package or an
// unexported identifier (a var = core.ErrX, a Mode(core.ModeOff), an
// Option func(*config)).
func TestPublicAPINamesNoInternals(t *testing.T) {
	for _, dir := range publicPackages(t) {
		t.Run(dir, func(t *testing.T) {
			for _, l := range load(t, dir).leaks(t) {
				t.Error(l)
			}
		})
	}
}

// internalInProse matches what names an internal package in a doc
// comment: a path under internal/ or a selector on one of the engine's
// packages.
var internalInProse = regexp.MustCompile(`\binternal/|\b(core|rt|gid|fpstack|chunked)\.[A-Za-z(]`)

// docs returns every doc comment go doc prints for the package, keyed by
// what it documents.
func (p *pkg) docs() map[string]string {
	out := map[string]string{"package " + p.doc.Name: p.doc.Doc}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			out[strings.Join(v.Names, ", ")] = v.Doc
		}
	}
	funcs := func(prefix string, fs []*doc.Func) {
		for _, f := range fs {
			out[prefix+f.Name] = f.Doc
		}
	}
	values(p.doc.Consts)
	values(p.doc.Vars)
	funcs("", p.doc.Funcs)
	for _, typ := range p.doc.Types {
		out[typ.Name] = typ.Doc
		values(typ.Consts)
		values(typ.Vars)
		funcs("", typ.Funcs)
		funcs(typ.Name+".", typ.Methods)
	}
	return out
}

// TestPublicDocsNameNoInternals: no doc comment of a public package, as go
// doc prints it, names an internal package: a reader cannot look it up.
func TestPublicDocsNameNoInternals(t *testing.T) {
	for _, dir := range publicPackages(t) {
		t.Run(dir, func(t *testing.T) {
			for what, text := range load(t, dir).docs() {
				for _, line := range strings.Split(text, "\n") {
					if internalInProse.MatchString(line) {
						t.Errorf("%s: the doc of %s names an internal package: %q", dir, what, strings.TrimSpace(line))
					}
				}
			}
		})
	}
}

// TestPublicAPIDocumented: every exported identifier of a public package,
// every exported method, every exported field of an exported struct type
// and every method of an exported interface has a doc comment (a line
// comment counts).
func TestPublicAPIDocumented(t *testing.T) {
	for _, dir := range publicPackages(t) {
		t.Run(dir, func(t *testing.T) {
			p := load(t, dir)
			if p.doc.Doc == "" {
				t.Errorf("package %s has no package doc", dir)
			}
			for _, name := range p.undocumented() {
				t.Errorf("%s.%s has no doc comment", dir, name)
			}
		})
	}
}
