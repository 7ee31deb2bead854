package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWrap(t *testing.T) {
	assert.Equal(t, "a b\nc", wrap("a b c", 3, ""))
	assert.Equal(t, "a\n  bb\n  c", wrap("a bb c", 3, "  "))
	assert.Equal(t, "  aa\n    b", wrap("  aa b", 4, "    "), "the first line keeps its indent")
	assert.Equal(t, "x\nlongword\ny", wrap("x longword y", 4, ""), "a word longer than the width has a line of its own")
	assert.Equal(t, "é é\né", wrap("é é é", 3, ""), "width counts runes")
}

// TestPlanAndProgress: before measuring, lockbench says what it will
// measure, how many runs each section makes and about how long it takes;
// each section's progress line says what one of its runs is; no line is
// wider than the terminal (COLUMNS) or, without one, 100 columns.
func TestPlanAndProgress(t *testing.T) {
	for _, width := range []int{0, 72} {
		t.Setenv("COLUMNS", "")
		if width > 0 {
			t.Setenv("COLUMNS", strconv.Itoa(width))
		}
		code, stdout, stderr := runArgs(t, tiny...)
		require.Equal(t, exitOK, code, stderr)
		limit := 100
		if width > 0 {
			limit = width
		}
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		require.NotEmpty(t, lines)
		assert.True(t, strings.HasPrefix(lines[0], "lockbench: 3 sections, each 0 warm-up rounds and 1 counted"), lines[0])
		plan, progress := unwrapped(stderr), stderr
		// tiny measures 5 exclusive locks (-locks and the two baselines),
		// 4 of them nested (not the depth2 monitor), at 2 goroutine counts.
		for _, want := range []string{
			"1. Uncontended: 1,000 Lock/Unlock pairs: 5 runs, about",
			"2. Two nested locks: 100 rounds of Lock a, Lock b, Unlock b, Unlock a: 4 runs, about",
			"3. Contended: 400 critical sections of ~100ns work, ~25ns between, shared by G goroutines: 10 runs, about",
			"About ", "in all, estimated from a 2,000-pair probe of each lock",
			"section 1 of 3, Uncontended: 1,000 Lock/Unlock pairs: 5 runs, each one lock's 1,000 Lock/Unlock pairs by one goroutine",
			"section 3 of 3, Contended: 400 critical sections of ~100ns work, ~25ns between, shared by G goroutines: 10 runs, " +
				"each one lock's 400 critical sections shared by one count of goroutines",
			"about ", " left)",
		} {
			assert.Contains(t, plan, want)
		}
		assert.Contains(t, progress, "lockbench: done in")
		for _, l := range strings.Split(progress, "\n") {
			assert.LessOrEqual(t, len([]rune(l)), limit, "stderr line %q", l)
		}
		// The explanations of the text output are wrapped too; the tables
		// (columns two spaces apart) and the command line are not.
		for _, l := range strings.Split(stdout, "\n") {
			if strings.Contains(strings.TrimSpace(l), "  ") || strings.HasPrefix(l, "command: ") {
				continue
			}
			assert.LessOrEqual(t, len([]rune(l)), limit, "stdout line %q", l)
		}
	}
}

// TestSummary: the text output closes with what reentrancy and owner
// checks cost, from the rows' paired ratios and the targets, with their
// IQR and the round count.
func TestSummary(t *testing.T) {
	rs := func(m, q1, q3 float64) *ratioStat { return &ratioStat{Median: m, Q1: q1, Q3: q3} }
	rep := &report{Rounds: 9, Sections: []*section{
		{Kind: kindPairs, Rows: []*row{
			{Lock: "sync.Mutex", CPUNsPerOp: stat{Median: 10}, CPURatio: rs(1, 1, 1), FloorCPURatio: rs(0.6, 0.55, 0.7)},
			{Lock: "floor.GoidLock", CPUNsPerOp: stat{Median: 16.5}, CPURatio: rs(1.65, 1.5, 1.8), FloorCPURatio: rs(1, 1, 1)},
			{Lock: "mutex.Mutex/detect=cycles", CPUNsPerOp: stat{Median: 11.9}, CPURatio: rs(1.19, 1.12, 1.28), FloorCPURatio: rs(0.69, 0.67, 0.95)},
			{Lock: "monitor.Monitor/detect=cycles", CPUNsPerOp: stat{Median: 12.1}, CPURatio: rs(1.21, 1.16, 1.34), FloorCPURatio: rs(0.75, 0.66, 0.87)},
			{Lock: "monitor.Monitor.depth2/detect=cycles", CPUNsPerOp: stat{Median: 10.9}, CPURatio: rs(1.09, 0.88, 1.22), FloorCPURatio: rs(0.69, 0.64, 0.74)},
		}},
		{Kind: kindContended, Rows: []*row{
			{Lock: "mutex.Mutex/detect=cycles", Goroutines: 1, Ratio: rs(0.97, 0.9, 1)},
			{Lock: "mutex.Mutex/detect=cycles", Goroutines: 2, Ratio: rs(0.97, 0.91, 1.02)},
			{Lock: "mutex.Mutex/detect=cycles", Goroutines: 8, Ratio: rs(1.13, 1.03, 1.25)},
		}},
	}, Targets: []target{{Question: "`monitor.Monitor` vs `mutex.Mutex`, first entry", Ratio: *rs(1.02, 0.94, 1.11)}}}
	got := strings.Join(summary(rep), "\n")
	for _, want := range []string{
		"Summary: CPU time per uncontended pair, locksmith in detect=cycles, medians of the per-round ratios with their IQR over 9 rounds.",
		"In Ruby a Monitor costs about 2.1x a Mutex per million pairs",
		"  Reentrancy: a monitor.Monitor costs 1.02x a mutex.Mutex (IQR 0.94–1.11) at first entry (12.10 against 11.90 ms per million pairs); " +
			"a re-entry by its owner costs 0.69x the floor lock's pair (IQR 0.64–0.74).",
		"  Owner checks: a mutex.Mutex costs 1.19x a sync.Mutex (IQR 1.12–1.28) and 0.69x the floor lock (IQR 0.67–0.95).",
		"costs 1.65x a sync.Mutex (IQR 1.50–1.80); sync.Mutex takes 10.00 ms per million pairs.",
		"  Contended, throughput against sync.Mutex: mutex.Mutex/detect=cycles 0.97x at 2, 1.13x at 8 goroutines.",
	} {
		assert.Contains(t, got, want)
	}
	assert.Nil(t, summary(&report{Sections: []*section{{Kind: kindContended}}}), "no uncontended table, no summary")

	// A real run's text output ends with it.
	code, stdout, stderr := runArgs(t, append([]string{"-quiet"}, tiny...)...)
	require.Equal(t, exitOK, code, stderr)
	tail := unwrapped(stdout[strings.LastIndex(stdout, "\nSummary: "):])
	assert.Regexp(t, regexp.MustCompile(`Owner checks: a mutex\.Mutex costs \d+\.\d\dx a sync\.Mutex \(IQR \d+\.\d\d–\d+\.\d\d\)`), tail)
	assert.Contains(t, tail, "over 1 round.")
}

// TestFrom: -from reads a JSON report back, losing nothing: written again
// as JSON it is the same bytes, and as text it has the same tables and
// summary as the run printed.
func TestFrom(t *testing.T) {
	code, js, stderr := runArgs(t, append([]string{"-quiet", "-format", "json"}, tiny...)...)
	require.Equal(t, exitOK, code, stderr)
	file := filepath.Join(t.TempDir(), "run.json")
	require.NoError(t, os.WriteFile(file, []byte(js), 0o644))
	code, again, stderr := runArgs(t, "-from", file, "-format", "json")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, js, again)
	assert.Empty(t, stderr, "nothing measured, nothing to report on stderr")
	code, text, stderr := runArgs(t, "-from", file)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, text, "Summary: CPU time per uncontended pair")
	assert.Contains(t, text, "Contended: 400 critical sections")

	code, _, stderr = runArgs(t, "-from", filepath.Join(t.TempDir(), "none.json"))
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "no such file")
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("{}"), 0o644))
	code, _, stderr = runArgs(t, "-from", bad)
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "the report has no sections")
}

// TestLoadAverage: where the system reports a load average, the report
// carries it at the start and the end of the run, and the page shows it
// beside the core count.
func TestLoadAverage(t *testing.T) {
	if _, ok := loadAverage(); !ok {
		t.Skip("no /proc/loadavg here")
	}
	code, stdout, stderr := runArgs(t, append([]string{"-quiet", "-format", "markdown"}, tiny...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `\| Load average \| \d+\.\d at the start, \d+\.\d at the end, on \d+ cores(: other work shared the CPUs, so the figures are noisy)? \|`, stdout)
}

// TestCompare: -compare counts, per section, the ratio medians inside the
// IQR of the same ratios in another report, leaving out the baselines'
// ratios to themselves.
func TestCompare(t *testing.T) {
	rs := func(m, q1, q3 float64) *ratioStat { return &ratioStat{Median: m, Q1: q1, Q3: q3} }
	ref := &report{Rounds: 21, Sections: []*section{{Kind: kindPairs, Rows: []*row{
		{Lock: "sync.Mutex", CPURatio: rs(1, 1, 1)},
		{Lock: "a", CPURatio: rs(1.1, 1.05, 1.15), FloorCPURatio: rs(0.7, 0.65, 0.75)},
		{Lock: "b", CPURatio: rs(2, 1.9, 2.1)},
	}}}}
	run := &report{Rounds: 7, Sections: []*section{{Kind: kindPairs, Rows: []*row{
		{Lock: "sync.Mutex", CPURatio: rs(1, 1, 1)},
		{Lock: "a", CPURatio: rs(1.154, 1, 1.2), FloorCPURatio: rs(0.8, 0.7, 0.9)}, // 1.15 as shown: inside; 0.80: outside
		{Lock: "b", CPURatio: rs(1.95, 1.9, 2)},
		{Lock: "c", CPURatio: rs(3, 3, 3)}, // not in ref
	}}}}
	var b strings.Builder
	compareReports(&b, "ref.json", ref, run)
	assert.Equal(t, "lockbench: medians of this run's 7-round ratios inside the IQR of ref.json's 21 rounds: pairs 2/3\n", b.String())

	file := filepath.Join(t.TempDir(), "ref.json")
	code, js, stderr := runArgs(t, append([]string{"-quiet", "-format", "json"}, tiny...)...)
	require.Equal(t, exitOK, code, stderr)
	require.NoError(t, os.WriteFile(file, []byte(js), 0o644))
	code, _, stderr = runArgs(t, append([]string{"-quiet", "-compare", file}, tiny...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `medians of this run's 1-round ratios inside the IQR of .*ref\.json's 1 rounds: pairs \d+/\d+, nested \d+/\d+, contended \d+/\d+`, unwrapped(stderr))
}

// TestDefaultRounds: with no -rounds, a run counts defaultRounds rounds.
func TestDefaultRounds(t *testing.T) {
	cfg, err := parseArgs(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 7, cfg.rounds)
	assert.Equal(t, defaultRounds, cfg.rounds)
}
