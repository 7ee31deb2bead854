package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, exitOK, run([]string{"-h"}, &out, &errOut))
	assert.Empty(t, out.String())
	assert.Contains(t, errOut.String(), "usage: suitecost")
	assert.Contains(t, errOut.String(), "-projects")
}

func TestBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-rounds", "0"}, "-rounds must be at least 1, -warmup and -count at least 0"},
		{[]string{"-count", "-1"}, "-rounds must be at least 1, -warmup and -count at least 0"},
		{[]string{"-projects", "nosuch"}, `"nosuch": not one of x/sync`},
		{[]string{"-projects", "example.com/m@"}, "want module@version"},
		{[]string{"-projects", ","}, "no project"},
		{[]string{"-locksmith", os.TempDir()}, "not the root of a checkout"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-nosuchflag"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			assert.Equal(t, exitUsage, run(tt.args, &out, &errOut))
			assert.Empty(t, out.String())
			assert.True(t, strings.HasPrefix(errOut.String(), shortUsage+"\n"), errOut.String())
			assert.Contains(t, errOut.String(), tt.want)
		})
	}
}

func TestParseProjects(t *testing.T) {
	ps, err := parseProjects("x/sync, example.com/m@v1.2.3")
	require.NoError(t, err)
	assert.Equal(t, []project{
		{Name: "x/sync", Module: "golang.org/x/sync", Version: "v0.25.0"},
		{Name: "example.com/m", Module: "example.com/m", Version: "v1.2.3"},
	}, ps)
}

// writeModule writes a module of the given files under dir and returns
// its root.
func writeModule(t *testing.T, dir, module string, files map[string]string) string {
	t.Helper()
	root := filepath.Join(dir, filepath.Base(module))
	files["go.mod"] = "module " + module + "\n\ngo 1.24\n"
	for name, src := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	}
	return root
}

// TestMeasureLocalProjects runs the whole pipeline but the download on two
// small modules: one whose suite passes in every variant and checks that
// each variant runs the binary it should (sync's types without
// LOCKSMITH_DETECT, locksmith's with it), and one with a lock-order
// inversion, which only Order mode reports, so its suite fails there and
// only there: the mode the variable names takes effect in the rewritten
// binaries. The binaries are built without -race, which needs cgo.
func TestMeasureLocalProjects(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two modules with the go command")
	}
	wd, err := os.Getwd()
	require.NoError(t, err)
	lib, err := findLibrary(wd)
	require.NoError(t, err)
	src := t.TempDir()
	clean := writeModule(t, src, "example.com/counter", map[string]string{
		"counter.go": `package counter

import "sync"

type Counter struct {
	mu sync.Mutex
	n  int
}

func (c *Counter) Inc() { c.mu.Lock(); c.n++; c.mu.Unlock() }

func (c *Counter) N() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
`,
		"counter_test.go": `package counter

import (
	"os"
	"reflect"
	"sync"
	"testing"
)

func TestInc(t *testing.T) {
	var c Counter
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				c.Inc()
			}
		}()
	}
	wg.Wait()
	if c.N() != 2000 {
		t.Fatalf("N = %d, want 2000", c.N())
	}
}

func TestLockType(t *testing.T) {
	got := reflect.TypeOf((*Counter)(nil)).Elem().Field(0).Type.PkgPath()
	want := "sync"
	if os.Getenv("LOCKSMITH_DETECT") != "" {
		want = "github.com/locksmith-go/locksmith/mutex"
	}
	if got != want {
		t.Fatalf("the lock's package is %s, want %s", got, want)
	}
}
`,
		// No test file: not measured, and not reported as skipped.
		"util/util.go": "package util\n",
	})
	inversion := writeModule(t, src, "example.com/inversion", map[string]string{
		"inversion.go": `package inversion

import "sync"

var a, b sync.RWMutex

func AB() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock() }

func BA() { b.Lock(); a.Lock(); a.Unlock(); b.Unlock() }
`,
		"inversion_test.go": `package inversion

import "testing"

func TestInversion(t *testing.T) { AB(); BA() }
`,
		// Tests that link no lock after the rewrite: reported as not measured.
		"other/other_test.go": "package other\n\nimport \"testing\"\n\nfunc TestNothing(t *testing.T) {}\n",
	})
	cfg := config{
		projects: []project{
			{Name: "counter", Module: "example.com/counter", Version: "v0.0.0", local: clean},
			{Name: "inversion", Module: "example.com/inversion", Version: "v0.0.0", local: inversion},
		},
		rounds: 2, locksmith: lib, work: t.TempDir(), timeout: defaultTimeout,
	}
	var out, progress bytes.Buffer
	code, err := measureAll(cfg, &out, &progress)
	require.NoError(t, err, progress.String())
	assert.Equal(t, exitError, code, "a suite failed")
	report := out.String()
	t.Log("\n" + report)

	assert.Contains(t, report, "no -race")
	assert.Regexp(t, `example.com/counter@v0.0.0\s+\.\s+1 files, 1 sync.Mutex, 0 sync.RWMutex`, report)
	assert.Regexp(t, `example.com/inversion@v0.0.0\s+\.\s+1 files, 0 sync.Mutex, 1 sync.RWMutex`, report)
	for _, v := range variants {
		assert.Regexp(t, `(?m)^\s*(counter\s+)?`+v+`\s+\d+\.\d\d\s+\d+\.\d\d–\d+\.\d\d\s+\d+\.\d\d\s`, report, v)
	}
	for _, r := range ratios {
		assert.Regexp(t, `(?m)^\s*(counter\s+)?`+r[0]+"/"+r[1]+`\s+\d+\.\d\d\s+\d+\.\d\d–\d+\.\d\d\s+\d+\.\d\d\s`, report)
	}
	assert.Regexp(t, `(?m)^\s*inversion\s+failed, see below`, report)
	assert.Contains(t, report, "example.com/inversion@v0.0.0: FAILED after the rewrite in LOCKSMITH_DETECT=order: example.com/inversion: exit status")
	assert.Contains(t, report, "failing tests: TestInversion\n")
	assert.Regexp(t, `first report: panic: .*lock.order`, report)
	m := regexp.MustCompile(`output: (\S+)`).FindStringSubmatch(report)
	require.NotNil(t, m)
	log, err := os.ReadFile(m[1])
	require.NoError(t, err)
	assert.Contains(t, string(log), "--- FAIL: TestInversion")
	assert.Contains(t, report, "not measured (their tests link no locksmith lock after the rewrite): example.com/inversion/other\n")
	assert.NotContains(t, report, "example.com/counter/util")

	// Both counted rounds of the counter ran, each variant once a round,
	// alternating the order; the inversion stopped in its warm-up-free
	// first round at Order, the last variant of that round.
	assert.Contains(t, progress.String(), "example.com/counter@v0.0.0: round 1/2: CPU sync ")
	assert.Regexp(t, `example.com/counter@v0.0.0: round 2/2: CPU order [^,]+, cycles [^,]+, off [^,]+, sync `, progress.String())
	assert.Contains(t, progress.String(), "example.com/inversion@v0.0.0: round 1/2: example.com/inversion failed in order")
}

// TestMeasureSkip: -skip reaches the test binaries, so a suite whose
// failing test is skipped is measured, and the report says which tests
// were skipped.
func TestMeasureSkip(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module with the go command")
	}
	wd, err := os.Getwd()
	require.NoError(t, err)
	lib, err := findLibrary(wd)
	require.NoError(t, err)
	inversion := writeModule(t, t.TempDir(), "example.com/inversion", map[string]string{
		"inversion.go": `package inversion

import "sync"

var a, b sync.Mutex

func AB() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock() }

func BA() { b.Lock(); a.Lock(); a.Unlock(); b.Unlock() }
`,
		"inversion_test.go": `package inversion

import "testing"

func TestInversion(t *testing.T) { AB(); BA() }

func TestAB(t *testing.T) { AB(); AB() }
`,
	})
	cfg := config{
		projects: []project{{Name: "inversion", Module: "example.com/inversion", Version: "v0.0.0", local: inversion}},
		rounds:   1, locksmith: lib, work: t.TempDir(), timeout: defaultTimeout, skipRE: "^TestInversion$",
	}
	var out, progress bytes.Buffer
	code, err := measureAll(cfg, &out, &progress)
	require.NoError(t, err, progress.String())
	assert.Equal(t, exitOK, code, out.String())
	assert.Regexp(t, `example.com/inversion@v0.0.0\s+\.\s+1 files, 1 sync.Mutex, 0 sync.RWMutex\s+1\s+\^TestInversion\$`, out.String())
	assert.Regexp(t, `(?m)^\s*inversion\s+order/cycles\s+\d`, out.String())
	assert.NotContains(t, out.String(), "FAILED")
}
