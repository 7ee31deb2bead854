package detect_test

import (
	"bufio"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testEvent is one line of go test -json (cmd/test2json's TestEvent).
type testEvent struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// testResults is what go test -json said about each test of a package:
// its final action (pass, fail, skip; "" for a test that got a run event
// and no end), and its output.
type testResults struct {
	action map[string]string
	output map[string]string
	pkg    string // the package's final action
	pkgOut string // the package's output outside any test
}

func parseTestJSON(t *testing.T, out string) map[string]*testResults {
	t.Helper()
	pkgs := map[string]*testResults{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "{") {
			continue // the go command's own output
		}
		var e testEvent
		require.NoError(t, json.Unmarshal([]byte(line), &e), line)
		p := pkgs[e.Package]
		if p == nil {
			p = &testResults{action: map[string]string{}, output: map[string]string{}}
			pkgs[e.Package] = p
		}
		switch {
		case e.Test == "" && (e.Action == "pass" || e.Action == "fail"):
			p.pkg = e.Action
		case e.Test == "" && e.Action == "output":
			p.pkgOut += e.Output
		case e.Action == "run":
			p.action[e.Test] = ""
		case e.Action == "pass" || e.Action == "fail" || e.Action == "skip":
			p.action[e.Test] = e.Action
		case e.Action == "output":
			p.output[e.Test] += e.Output
		}
	}
	return pkgs
}

// fixture reads the module under testdata/verify into newGoModule's map.
func fixture(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	root := filepath.Join("testdata", "verify")
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	}))
	return files
}

// TestGoTestVerify runs go test -json on a module with lock-order
// inversions in several tests: one parallel, one in a subtest, one made
// in a goroutine the test started, beside clean tests, and one test that
// leaves a goroutine stuck waiting for a lock whose holder blocks in a
// channel send.
//
//   - With VerifyNone in each test and VerifyTestMain (package verified),
//     exactly the tests with findings fail, each with its own report in
//     its own output, the clean ones pass, every test that ran has its
//     end event, and the package fails.
//   - With VerifyTestMain alone (package mainonly) the tests pass, the
//     inversion is printed at the end with the test that made it, and the
//     package fails.
//   - With no helper (package nohelper) the default reporter panics: the
//     package fails at the first inversion, with the test's name; and
//     at a wait timeout (package nohelperwait), once the report is
//     printed.
//
// No LOCKSMITH_ variable is set: Order mode is the test binaries' default.
func TestGoTestVerify(t *testing.T) {
	t.Parallel()
	m := newGoModule(t, fixture(t))
	out, code := m.goCmd([]string{"test", "-json", "./..."})
	assert.NotZero(t, code, "the exit status")
	pkgs := parseTestJSON(t, out)
	t.Logf("go test -json ./...:\n%s", out)

	v := pkgs["example.com/bank/verified"]
	require.NotNil(t, v, "no events for package verified")
	assert.Equal(t, "fail", v.pkg)
	want := map[string]string{
		"TestParallelInversion":      "fail",
		"TestParallelClean":          "pass",
		"TestSubtestInversion":       "fail",
		"TestSubtestInversion/inner": "fail",
		"TestSubtestInversion/clean": "pass",
		"TestGoroutineInversion":     "fail",
		"TestClean":                  "pass",
		"TestLeavesWaiter":           "fail",
	}
	assert.Equal(t, want, v.action, "every test's end event")
	const inversion = "WARNING: possible circular locking dependency detected"
	for _, name := range []string{"TestParallelInversion", "TestSubtestInversion/inner", "TestGoroutineInversion"} {
		assert.Equal(t, 1, strings.Count(v.output[name], inversion), "%s: its report in its output:\n%s", name, v.output[name])
	}
	for _, name := range []string{"TestParallelClean", "TestSubtestInversion/clean", "TestClean", "TestLeavesWaiter"} {
		assert.NotContains(t, v.output[name], inversion, name)
	}
	leak := v.output["TestLeavesWaiter"]
	assert.Contains(t, leak, "is stuck waiting for a lock")
	assert.Regexp(t, `has waited \S+ to lock \*mutex\.Mutex 0x[0-9a-f]+ first (?:locked|waited for) at \S+/verified_test\.go:\d+ at \S+/verified_test\.go:\d+,`, leak)
	assert.Regexp(t, `held by goroutine \d+, which is blocked in chan send at \S+/verified_test\.go:\d+`, leak)
	assert.NotContains(t, v.pkgOut, "no test claimed", "every finding was a test's")

	mo := pkgs["example.com/bank/mainonly"]
	require.NotNil(t, mo, "no events for package mainonly")
	assert.Equal(t, "fail", mo.pkg)
	assert.Equal(t, map[string]string{"TestInversion": "pass", "TestClean": "pass"}, mo.action)
	assert.Contains(t, mo.pkgOut, "that no test claimed")
	assert.Contains(t, mo.pkgOut, "from mainonly.TestInversion:")
	assert.Equal(t, 1, strings.Count(mo.pkgOut, inversion), mo.pkgOut)

	nh := pkgs["example.com/bank/nohelper"]
	require.NotNil(t, nh, "no events for package nohelper")
	assert.Equal(t, "fail", nh.pkg)
	assert.Equal(t, "fail", nh.action["TestInversion"])
	assert.Contains(t, nh.output["TestInversion"], "panic: detect: lock order inversion")
	assert.Contains(t, nh.output["TestInversion"], "(in nohelper.TestInversion)", "the panic names the test")

	nw := pkgs["example.com/bank/nohelperwait"]
	require.NotNil(t, nw, "no events for package nohelperwait")
	assert.Equal(t, "fail", nw.pkg, "a wait timeout with no helper fails the package")
	// The panic is the watchdog's goroutine's, not the test's: go test
	// gives the test no end event, as for any such panic.
	assert.NotEqual(t, "pass", nw.action["TestWaitsForEver"])
	assert.Contains(t, nw.output["TestWaitsForEver"], "goroutine blocked on a lock for")
	assert.Contains(t, nw.output["TestWaitsForEver"], "the test binary stops here")
	assert.Contains(t, nw.output["TestWaitsForEver"], "(from nohelperwait.TestWaitsForEver", "the panic names the test")
}
