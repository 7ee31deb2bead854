package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// lockbenchJSON runs lockbench itself, briefly, for its JSON report, so
// that the chart is checked against what lockbench writes today.
func lockbenchJSON(t *testing.T) []byte {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	require.NoError(t, err, "the go command")
	cmd := exec.Command(goCmd, "run", "../lockbench", "-format", "json", "-quiet",
		"-pairs", "1000", "-nested", "100", "-ops", "400", "-rounds", "1", "-warmup", "0",
		"-goroutines", "1,2", "-locks", "mutex.Mutex/detect=off,spin.TTAS")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "lockbench: %s", stderr.String())
	return out
}

func plotArgs(t *testing.T, stdin []byte, args ...string) (code int, stderr string) {
	t.Helper()
	var errOut bytes.Buffer
	code = run(args, bytes.NewReader(stdin), &errOut)
	return code, errOut.String()
}

func TestChartOfLockbenchRun(t *testing.T) {
	report := lockbenchJSON(t)
	dir := t.TempDir()
	check := func(file string) {
		t.Helper()
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		svg := string(b)
		assert.True(t, strings.HasPrefix(svg, "<?xml") && strings.Contains(svg, "<svg"), "an SVG file")
		assert.Contains(t, svg, "goroutines")
		assert.Contains(t, svg, "spin.TTAS", "the legend names the locks")
		assert.Contains(t, svg, "mutex.Mutex/detect=off")
		// Legible without extra fonts: every text names widely installed,
		// metric-compatible families and a generic fallback.
		fams := regexp.MustCompile(`font-family:([^;"]*)`).FindAllStringSubmatch(svg, -1)
		require.NotEmpty(t, fams)
		for _, f := range fams {
			assert.Equal(t, "Liberation Sans,Arial,Helvetica,sans-serif", f[1])
		}
		assert.NotContains(t, svg, "Serif")
	}

	fromStdin := filepath.Join(dir, "stdin.svg")
	code, stderr := plotArgs(t, report, "-o", fromStdin)
	require.Zero(t, code, stderr)
	check(fromStdin)

	in := filepath.Join(dir, "results.json")
	require.NoError(t, os.WriteFile(in, report, 0o644))
	fromFile := filepath.Join(dir, "file.svg")
	code, stderr = plotArgs(t, nil, "-o", fromFile, in)
	require.Zero(t, code, stderr)
	check(fromFile)
}

// TestChartOfRWMix: -reads charts the read-mostly mix at that read
// share, one line per read-write lock.
func TestChartOfRWMix(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	require.NoError(t, err, "the go command")
	cmd := exec.Command(goCmd, "run", "../lockbench", "-format", "json", "-quiet", "-workload", "rw",
		"-pairs", "1000", "-ops", "400", "-rounds", "1", "-warmup", "0",
		"-goroutines", "1,2", "-locks", "mutex.RWMutex/detect=off,monitor.RWMonitor/detect=off")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	report, err := cmd.Output()
	require.NoError(t, err, "lockbench: %s", errb.String())
	for _, reads := range []string{"90", "99"} {
		file := filepath.Join(t.TempDir(), "rw.svg")
		code, stderr := plotArgs(t, report, "-o", file, "-reads", reads)
		require.Zero(t, code, stderr)
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		svg := string(b)
		for _, want := range []string{"sync.RWMutex", "mutex.RWMutex/detect=off", "monitor.RWMonitor/detect=off",
			reads + " % reads", "million operations per second", "CPU time per operation"} {
			assert.Contains(t, svg, want)
		}
		assert.NotContains(t, svg, "critical section")
	}
	code, stderr := plotArgs(t, report, "-o", filepath.Join(t.TempDir(), "c.svg"))
	assert.Equal(t, 1, code, "no contended table in a -workload rw run")
	assert.Contains(t, stderr, "no contended results")
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "c.svg")
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"not JSON", "tables", []string{"-o", out}, 1, "reading lockbench's JSON"},
		{"no contended section", `{"sections":[{"kind":"pairs","rows":[]}]}`, []string{"-o", out}, 1, "no contended results"},
		{"no mix at that read share", `{"sections":[{"kind":"rwmix","rows":[{"lock":"l","goroutines":1,"reads_percent":90}]}]}`,
			[]string{"-o", out, "-reads", "50"}, 1, "no read-mostly results with 50 % reads"},
		{"missing input file", "", []string{"-o", out, filepath.Join(dir, "none.json")}, 1, "no such file"},
		{"two inputs", "", []string{"a.json", "b.json"}, 2, "usage: lockbench -format json | lockplot"},
		{"bad flag", "", []string{"-x"}, 2, "flag provided but not defined"},
		{"one goroutine count", `{"sections":[{"kind":"contended","rows":[{"lock":"l","goroutines":1}]}]}`,
			[]string{"-o", out}, 1, "needs two or more"},
		{"unwritable output", `{"sections":[{"kind":"contended","rows":[{"lock":"l","goroutines":1},{"lock":"l","goroutines":2}]}]}`,
			[]string{"-o", filepath.Join(dir, "no", "dir", "c.svg")}, 1, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := plotArgs(t, []byte(tc.stdin), tc.args...)
			assert.Equal(t, tc.code, code)
			assert.Contains(t, stderr, tc.want)
		})
	}
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err), "no chart written on failure")
}
