package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const imp = `locksmithmutex "github.com/locksmith-go/locksmith/mutex"`

func TestRewriteFile(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		want      string // the whole rewritten file
		wantN     counts
		unchanged bool
	}{{
		name: "only Mutex: the import of sync becomes the import of mutex",
		src: `package p

import (
	"fmt"
	"sync" // for the lock
)

type T struct {
	mu sync.Mutex // guards n
	n  int
}

func f() { fmt.Println(new(sync.Mutex)) }
`,
		want: `package p

import (
	"fmt"
	` + imp + ` // for the lock
)

type T struct {
	mu locksmithmutex.Mutex // guards n
	n  int
}

func f() { fmt.Println(new(locksmithmutex.Mutex)) }
`,
		wantN: counts{Files: 1, Mutex: 2},
	}, {
		name: "sync still used: both imports, in the same list, sorted, comments in place",
		src: `package p

import (
	"sync"
)

// errNone follows the imports.
var errNone error

type T struct {
	sync.RWMutex
	wg   sync.WaitGroup
	once sync.Once
	l    sync.Locker
}

var c = sync.NewCond(&sync.Mutex{})
`,
		want: `package p

import (
	` + imp + `
	"sync"
)

// errNone follows the imports.
var errNone error

type T struct {
	locksmithmutex.RWMutex
	wg   sync.WaitGroup
	once sync.Once
	l    sync.Locker
}

var c = sync.NewCond(&locksmithmutex.Mutex{})
`,
		wantN: counts{Files: 1, Mutex: 1, RWMutex: 1},
	}, {
		name: "single-line import of sync still used: a declaration of its own",
		src: `//go:build linux

package p

import "sync"

var (
	mu   sync.RWMutex
	once sync.Once
)
`,
		want: `//go:build linux

package p

import "sync"
import ` + imp + `

var (
	mu   locksmithmutex.RWMutex
	once sync.Once
)
`,
		wantN: counts{Files: 1, RWMutex: 1},
	}, {
		name: "renamed import of sync",
		src: `package p

import gosync "sync"

var mu gosync.Mutex
`,
		want: `package p

import ` + imp + `

var mu locksmithmutex.Mutex
`,
		wantN: counts{Files: 1, Mutex: 1},
	}, {
		name: "a local named sync is not the package",
		src: `package p

import "sync"

type box struct{ Mutex int }

var mu sync.Mutex

func f() int {
	sync := box{}
	return sync.Mutex
}
`,
		want: `package p

import ` + imp + `

type box struct{ Mutex int }

var mu locksmithmutex.Mutex

func f() int {
	sync := box{}
	return sync.Mutex
}
`,
		wantN: counts{Files: 1, Mutex: 1},
	}, {
		name:      "no sync lock: unchanged",
		src:       "package p\n\nimport \"sync\"\n\nvar wg sync.WaitGroup\n",
		unchanged: true,
	}, {
		name:      "no import of sync: unchanged",
		src:       "package p\n\ntype Mutex struct{}\n\nvar mu Mutex\n",
		unchanged: true,
	}, {
		name:      "blank import of sync: unchanged",
		src:       "package p\n\nimport _ \"sync\"\n",
		unchanged: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n, err := rewriteFile("p.go", []byte(tt.src))
			require.NoError(t, err)
			if tt.unchanged {
				assert.Equal(t, tt.src, string(got))
				assert.Zero(t, n)
				return
			}
			assert.Equal(t, tt.wantN, n)
			assert.Equal(t, tt.want, string(got))
		})
	}
}

func TestRewriteFileRefuses(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"dot import", "package p\n\nimport . \"sync\"\n\nvar mu Mutex\n", "imports sync with a dot"},
		{"the alias taken", "package p\n\nimport \"sync\"\n\nvar locksmithmutex sync.Mutex\n", "declares or uses locksmithmutex"},
		{"not Go", "package p\n\nfunc {\n", "expected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := rewriteFile("p.go", []byte(tt.src))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestRewriteTree: every package's files are rewritten, tests included;
// testdata, vendor and dot or underscore directories are not, as the go
// command compiles none of them.
func TestRewriteTree(t *testing.T) {
	dir := t.TempDir()
	lock := "package p\n\nimport \"sync\"\n\nvar mu sync.Mutex\n"
	files := map[string]string{
		"a.go":                 lock,
		"a_test.go":            "package p_test\n\nimport \"sync\"\n\nvar rw sync.RWMutex\n",
		"sub/b.go":             lock,
		"testdata/c.go":        lock,
		"vendor/x/d.go":        lock,
		".hidden/e.go":         lock,
		"_old/f.go":            lock,
		"sub/notes.txt":        "sync.Mutex",
		"sub/nolock.go":        "package p\n\nimport \"sync\"\n\nvar o sync.Once\n",
		"sub/testdata/keep.go": lock,
	}
	for name, src := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	}
	n, err := rewriteTree(dir)
	require.NoError(t, err)
	assert.Equal(t, counts{Files: 3, Mutex: 2, RWMutex: 1}, n)
	for name, src := range files {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		if name == "sub/b.go" || name == "a.go" || name == "a_test.go" {
			assert.Contains(t, string(b), imp, name)
			assert.NotContains(t, string(b), "sync.", name)
		} else {
			assert.Equal(t, src, string(b), name)
		}
	}

	empty := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(empty, "a.go"), []byte("package p\n"), 0o644))
	_, err = rewriteTree(empty)
	assert.ErrorContains(t, err, "no file refers to sync.Mutex or sync.RWMutex")
}
