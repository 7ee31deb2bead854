package detect_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// These tests run the real go command on a throwaway module that uses the
// library through a replace directive, as a user's module would, and look
// at what go test prints and returns: the result cache, the exit status,
// the test's name and the report.

// bankGo is the throwaway module's code: Transfer locks its two accounts
// in argument order, so Transfer(a, b) and Transfer(b, a) can deadlock.
const bankGo = `package bank

import "github.com/locksmith-go/locksmith/mutex"

type Account struct {
	mu      mutex.Mutex
	balance int
}

func Transfer(from, to *Account, n int) {
	from.mu.Lock() // FROM
	defer from.mu.Unlock()
	to.mu.Lock() // TO
	defer to.mu.Unlock()
	from.balance -= n
	to.balance += n
}
`

// inversionTest makes the inversion one transfer after the other: no run
// of it hangs, but another interleaving can.
const inversionTest = `package bank

import "testing"

func TestTransferBothWays(t *testing.T) {
	a, b := &Account{balance: 100}, &Account{balance: 100}
	Transfer(a, b, 30)
	Transfer(b, a, 10)
	if a.balance+b.balance != 200 {
		t.Fatal("money lost")
	}
}
`

// orderedTest only ever transfers one way: nothing to report in any mode.
const orderedTest = `package bank

import "testing"

func TestTransferOneWay(t *testing.T) {
	a, b := &Account{balance: 100}, &Account{balance: 100}
	Transfer(a, b, 30)
	Transfer(a, b, 10)
	if a.balance != 60 {
		t.Fatal("wrong balance")
	}
}
`

// goModule is a throwaway module in a temporary directory.
type goModule struct {
	t   *testing.T
	dir string
	gob string // the go command
}

// newGoModule writes a module requiring the library (replaced by this
// checkout) with the given files. The library's go.sum entries are copied,
// and the go command runs offline: everything it needs is in the module
// cache already, since this test binary was built from it.
func newGoModule(t *testing.T, files map[string]string) *goModule {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the go command, which builds and links test binaries: 5 to 20 s")
	}
	gob, err := exec.LookPath("go")
	if err != nil {
		if goroot := os.Getenv("GOROOT"); goroot != "" {
			gob = filepath.Join(goroot, "bin", "go")
		}
	}
	if _, err := os.Stat(gob); gob == "" || err != nil {
		t.Skip("no go command to run")
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	// The library's go line: the oldest toolchain the library supports
	// (CI runs this test with it, and with GOTOOLCHAIN=local a newer go
	// line would refuse to build).
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	goLine := regexp.MustCompile(`(?m)^go [0-9.]+$`).Find(mod)
	require.NotNil(t, goLine, "the library's go.mod has no go line")
	dir := t.TempDir()
	all := map[string]string{
		"go.mod": "module example.com/bank\n\n" + string(goLine) + "\n\n" +
			"require github.com/locksmith-go/locksmith v0.0.0\n\n" +
			"replace github.com/locksmith-go/locksmith => " + root + "\n",
		"go.sum": string(sum),
	}
	for name, text := range files {
		all[name] = text
	}
	for name, text := range all {
		path := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	return &goModule{t: t, dir: dir, gob: gob}
}

// goTest runs go test on the module's package with env added to a clean
// environment, and returns the combined output and the exit code.
func (m *goModule) goTest(env ...string) (out string, code int) {
	m.t.Helper()
	return m.goCmd([]string{"test", "."}, env...)
}

// goCmd runs the go command with args in the module, as goTest does.
func (m *goModule) goCmd(args []string, env ...string) (out string, code int) {
	m.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*testutil.Liveness)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.gob, args...)
	cmd.Dir = m.dir
	for _, e := range os.Environ() {
		name, _, _ := strings.Cut(e, "=")
		switch {
		case strings.HasPrefix(name, "LOCKSMITH_"), name == "GOFLAGS", name == "GOWORK",
			name == "GOPROXY", name == "GOTOOLCHAIN", name == "GOSUMDB":
			continue
		}
		cmd.Env = append(cmd.Env, e)
	}
	cmd.Env = append(cmd.Env, "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off", "GOTOOLCHAIN=local")
	cmd.Env = append(cmd.Env, env...)
	b, err := cmd.CombinedOutput()
	require.NoError(m.t, ctx.Err(), "go %v %v did not finish:\n%s", args, env, b)
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		m.t.Fatalf("go %v %v: %v\n%s", args, env, err, b)
	}
	return string(b), code
}

// passes runs go test and requires it to pass, served from the cache or
// run, as cached says.
func (m *goModule) passes(cached bool, env ...string) string {
	m.t.Helper()
	out, code := m.goTest(env...)
	require.Zero(m.t, code, "go test %v failed:\n%s", env, out)
	require.Regexp(m.t, `(?m)^ok\s+example\.com/bank\s`, out)
	if cached {
		require.Contains(m.t, out, "(cached)", "go test %v: the same inputs are served from the cache", env)
	} else {
		require.NotContains(m.t, out, "(cached)", "go test %v: a run with other detector settings must not be served from the cache", env)
	}
	return out
}

// TestGoTestCacheSeesTheEnvironment: go test's result cache keys a
// package's result on the environment variables its test binary read
// once its tests started. The detector's variables change what a run
// finds, so a run with another LOCKSMITH_DETECT or LOCKSMITH_DETECT_REPORT
// must run again, however the first run went; so must a run with another
// LOCKSMITH_WAIT_TIMEOUT.
func TestGoTestCacheSeesTheEnvironment(t *testing.T) {
	t.Parallel()
	m := newGoModule(t, map[string]string{"bank.go": bankGo, "bank_test.go": orderedTest})
	m.passes(false)
	m.passes(true) // the cache works here: without this, the checks below would prove nothing
	m.passes(false, detect.EnvVar+"=order")
	m.passes(true, detect.EnvVar+"=order")
	m.passes(false, detect.EnvVar+"=order", detect.ReportEnvVar+"=print")
	m.passes(false, detect.EnvVar+"=off")
	m.passes(false, detect.EnvVar+"=off", detect.WaitTimeoutEnvVar+"=1m")
	m.passes(true, detect.EnvVar+"=off", detect.WaitTimeoutEnvVar+"=1m")
}

// TestGoTestFailsOnInversion: in Order mode, the default of a test
// binary, a lock-order inversion fails go test, with the test's name and
// a report that names both acquisition sites, also right after the same
// package passed (and was cached) in Cycles mode, which cannot see an
// inversion that did not hang. With LOCKSMITH_DETECT_REPORT=print it is
// only printed.
func TestGoTestFailsOnInversion(t *testing.T) {
	t.Parallel()
	m := newGoModule(t, map[string]string{"bank.go": bankGo, "bank_test.go": inversionTest})
	from := lineOf(t, bankGo, "// FROM")
	to := lineOf(t, bankGo, "// TO")

	m.passes(false, detect.EnvVar+"=cycles")
	m.passes(true, detect.EnvVar+"=cycles")
	for _, env := range [][]string{nil, {detect.EnvVar + "=order"}} {
		out, code := m.goTest(env...)
		t.Logf("%v go test .:\n%s", env, out)
		assert.NotZero(t, code, "%v: the exit status", env)
		assert.Regexp(t, `(?m)^FAIL\s+example\.com/bank\s`, out)
		assert.Contains(t, out, "--- FAIL: TestTransferBothWays")
		assert.Contains(t, out, "panic: detect: lock order inversion: goroutine ")
		assert.Contains(t, out, "WARNING: possible circular locking dependency detected")
		// Both sites: where each goroutine took the lock it holds (FROM)
		// and where it took the next one (TO).
		assert.Regexp(t, fmt.Sprintf(`locked at example\.com/bank\.Transfer\n\s+\S+/bank\.go:%d\n`, from), out)
		assert.Regexp(t, fmt.Sprintf(`example\.com/bank\.Transfer\n\s+\S+/bank\.go:%d\n`, to), out)
		assert.Regexp(t, fmt.Sprintf(`path 1: lock\(0x[0-9a-f]+\); lock\(0x[0-9a-f]+\); at \S+/bank\.go:%d\n`, to), out)
		assert.Regexp(t, `example\.com/bank\.TestTransferBothWays\n\s+\S+/bank_test\.go:8\n`, out, "the closing call in the test")
	}

	out := m.passes(false, detect.EnvVar+"=order", detect.ReportEnvVar+"=print")
	assert.NotContains(t, out, "possible circular", "go test hides a passing package's output")
}

// mainGo is a program that makes the inversion and then says it went on.
const mainGo = `package main

import (
	"fmt"

	"example.com/bank"
)

func main() {
	a, b := &bank.Account{}, &bank.Account{}
	bank.Transfer(a, b, 30)
	bank.Transfer(b, a, 10)
	fmt.Println("went on")
}
`

// TestGoRunPrintsInversion: outside a test binary the default reporter
// prints an inversion once to stderr and the program goes on, with exit
// status 0; LOCKSMITH_DETECT_REPORT=panic makes the same program fail.
func TestGoRunPrintsInversion(t *testing.T) {
	t.Parallel()
	m := newGoModule(t, map[string]string{"bank.go": bankGo, "cmd/transfer/main.go": mainGo})
	out, code := m.goCmd([]string{"run", "./cmd/transfer"}, detect.EnvVar+"=order")
	require.Zero(t, code, "go run failed:\n%s", out)
	assert.Contains(t, out, "went on\n")
	assert.Equal(t, 1, strings.Count(out, "WARNING: possible circular locking dependency detected"), out)
	assert.NotContains(t, out, "panic:")

	out, code = m.goCmd([]string{"run", "./cmd/transfer"}, detect.EnvVar+"=order", detect.ReportEnvVar+"=panic")
	assert.NotZero(t, code, "the exit status:\n%s", out)
	assert.NotContains(t, out, "went on")
	assert.Contains(t, out, "panic: detect: lock order inversion: goroutine ")
}

// lineOf returns the line number of the line of text containing marker.
func lineOf(t *testing.T, text, marker string) int {
	t.Helper()
	for i, line := range strings.Split(text, "\n") {
		if strings.Contains(line, marker) {
			return i + 1
		}
	}
	t.Fatalf("no %q", marker)
	return 0
}
