// Package readmecheck holds the test that keeps README.md honest: every Go
// snippet in it is code that compiles and runs as an Example, and every
// example it says to run is a main package.
package readmecheck_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const root = "../../.."

// decls returns the top-level declarations of a Go file's source, keyed
// by name ("Type", "Type.Method", "Func"), as their source text.
func decls(t *testing.T, name, src string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	require.NoError(t, err, "%s does not parse", name)
	text := func(n ast.Node) string {
		return src[fset.Position(n.Pos()).Offset:fset.Position(n.End()).Offset]
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			key := d.Name.Name
			if d.Recv != nil {
				typ := d.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				key = typ.(*ast.Ident).Name + "." + key
			}
			out[key] = text(d)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok {
					out[ts.Name.Name] = text(d)
				}
			}
		}
	}
	return out
}

// TestREADMESnippetsAreExamples: each ```go block of README.md is a list
// of declarations found, character for character, in an example_test.go
// of the module, and declares at least one Example function, which
// `go test` runs and checks against its // Output comment.
func TestREADMESnippetsAreExamples(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	require.NotEmpty(t, blocks, "no Go snippets in README.md")

	files, err := filepath.Glob(filepath.Join(root, "*", "example_test.go"))
	require.NoError(t, err)
	known := map[string]map[string]string{} // file -> declarations
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		known[f] = decls(t, f, string(src))
	}

	for i, b := range blocks {
		snippet := decls(t, "README.md snippet", "package p\n\n"+b[1])
		require.NotEmpty(t, snippet, "snippet %d declares nothing", i)
		var home string // the example file that holds the snippet's Example
		for name := range snippet {
			if !strings.HasPrefix(name, "Example") {
				continue
			}
			for f, ds := range known {
				if _, ok := ds[name]; ok {
					home = f
				}
			}
		}
		require.NotEmpty(t, home, "snippet %d: no Example function of it found in any example_test.go:\n%s", i, b[1])
		for name, src := range snippet {
			assert.Equal(t, known[home][name], src, "snippet %d: %s differs from %s", i, name, home)
		}
	}
}

// TestREADMEExamplesRun: every `./examples/NAME` the README names is a
// main package, so `go run ./examples/NAME` runs.
func TestREADMEExamplesRun(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("examples/([a-z]+)").FindAllStringSubmatch(string(readme), -1) {
		named[m[1]] = true
	}
	// The examples table names them as `NAME` in its first column.
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z]+)` \\|").FindAllStringSubmatch(string(readme), -1) {
		named[m[1]] = true
	}
	dirs, err := os.ReadDir(filepath.Join(root, "examples"))
	require.NoError(t, err)
	for _, d := range dirs {
		assert.True(t, named[d.Name()], "examples/%s is not in the README's examples", d.Name())
	}
	for name := range named {
		src, err := os.ReadFile(filepath.Join(root, "examples", name, "main.go"))
		if !assert.NoError(t, err, "examples/%s", name) {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), "main.go", src, parser.PackageClauseOnly)
		require.NoError(t, err)
		assert.Equal(t, "main", f.Name.Name, "examples/%s is not a main package", name)
	}
}
