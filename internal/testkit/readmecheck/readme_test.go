// Package readmecheck holds the tests that keep README.md honest: every Go
// snippet in it and in docs/types.md is code that compiles and runs as an
// Example, every example it says to run is a main package, and every
// relative link of the Markdown pages leads to a file and heading that
// exist.
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

// snippetPages are the pages whose ```go blocks are copies of Examples.
var snippetPages = []string{"README.md", "docs/types.md"}

// TestREADMESnippetsAreExamples: each ```go block of README.md and
// docs/types.md is a list of declarations found, character for character,
// in an example_test.go of the module, and declares at least one Example
// function, which `go test` runs and checks against its // Output comment.
func TestREADMESnippetsAreExamples(t *testing.T) {
	for _, page := range snippetPages {
		t.Run(page, func(t *testing.T) { checkSnippets(t, page) })
	}
}

func checkSnippets(t *testing.T, page string) {
	text, err := os.ReadFile(filepath.Join(root, page))
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(text), -1)
	require.NotEmpty(t, blocks, "no Go snippets in %s", page)

	files, err := filepath.Glob(filepath.Join(root, "*", "example_test.go"))
	require.NoError(t, err)
	known := map[string]map[string]string{} // file -> declarations
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		known[f] = decls(t, f, string(src))
	}

	for i, b := range blocks {
		snippet := decls(t, page+" snippet", "package p\n\n"+b[1])
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

// TestDocLinksResolve: every relative link of README.md, BENCHMARKS.md and
// docs/*.md names a file of the repository and, after a #, a heading of
// that page as GitHub anchors it (lower case, punctuation dropped, spaces
// as hyphens). Links in code blocks and to other sites are not links to
// check.
func TestDocLinksResolve(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	pages = append(pages, filepath.Join(root, "README.md"), filepath.Join(root, "BENCHMARKS.md"))
	code := regexp.MustCompile("(?s)```.*?```")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	for _, page := range pages {
		text, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, m := range link.FindAllStringSubmatch(code.ReplaceAllString(string(text), ""), -1) {
			target := m[1]
			if regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = filepath.Join(filepath.Dir(page), file)
			}
			checked++
			if _, err := os.Stat(dest); !assert.NoError(t, err, "%s: link %s", page, target) {
				continue
			}
			if anchor != "" {
				assert.Contains(t, anchors(t, dest), anchor, "%s: link %s names no heading of %s", page, target, dest)
			}
		}
	}
	assert.NotZero(t, checked, "no relative links found")
}

// anchors returns the GitHub anchors of the headings of a Markdown page.
func anchors(t *testing.T, page string) map[string]bool {
	t.Helper()
	text, err := os.ReadFile(page)
	require.NoError(t, err)
	drop := regexp.MustCompile(`[^a-z0-9_\- ]`)
	out := map[string]bool{}
	inCode := false
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		out[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(h), ""), " ", "-")] = true
	}
	return out
}
