package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/bench"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// tiny is a run that takes a fraction of a second, even with -race.
var tiny = []string{
	"-pairs", "1000", "-nested", "100", "-ops", "400", "-items", "200", "-batches", "1,10",
	"-rounds", "1", "-warmup", "0", "-goroutines", "1,2",
	"-locks", "mutex.Mutex/detect=off,monitor.Monitor.depth2/detect=off,spin.TTAS," +
		"mutex.RWMutex/detect=cycles,monitor.RWMonitor*/detect=cycles,go-deadlock.RWMutex",
}

// unwrapped joins the lines of s that wrap wraps, to look for a sentence
// whatever the width.
func unwrapped(s string) string { return strings.Join(strings.Fields(s), " ") }

func runArgs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"-pairs", "0"}, "-pairs must be at least 1"},
		{[]string{"-pairs", "many"}, `invalid value "many" for flag -pairs`},
		{[]string{"-nested", "-5"}, "-nested must be at least 1"},
		{[]string{"-ops", "0"}, "-ops must be at least 1"},
		{[]string{"-rounds", "0"}, "-rounds must be at least 1"},
		{[]string{"-warmup", "-1"}, "-warmup must be at least 0"},
		{[]string{"-goroutines", "1,x"}, `"x" is not a positive integer`},
		{[]string{"-goroutines", "0"}, `"0" is not a positive integer`},
		{[]string{"-batches", ""}, `"" is not a positive integer`},
		{[]string{"-format", "xml"}, "must be one of text, markdown, json, csv"},
		{[]string{"-workload", "stress"}, "must be one of headline, latency, pool, batch, rw, all"},
		{[]string{"-locks", "nosuch"}, `no lock matches "nosuch"`},
		{[]string{"-locks", "["}, "bad lock pattern"},
		{[]string{"-latency", "-workload", "pool"}, "does not apply to -workload pool"},
		{[]string{"-latency", "-workload", "rw"}, "does not apply to -workload rw"},
		{[]string{"-work", "-1ns"}, "must not be negative"},
		{[]string{"-soak", "-1s"}, "-soak must not be negative"},
		{[]string{"-nosuchflag"}, "flag provided but not defined: -nosuchflag"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runArgs(t, tt.args...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, stdout, "nothing on stdout for bad flags")
			// One short usage line, then the error, last, where a terminal
			// leaves it in view; not the full flag list.
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			require.Len(t, lines, 2, "stderr:\n%s", stderr)
			assert.Equal(t, shortUsage, lines[0])
			assert.True(t, strings.HasPrefix(lines[1], "lockbench: "), lines[1])
			assert.Contains(t, lines[1], tt.want)
			assert.Contains(t, lines[0], "lockbench -h", "says how to get the flags")
		})
	}
}

func TestHelp(t *testing.T) {
	code, stdout, stderr := runArgs(t, "-h")
	assert.Equal(t, exitOK, code)
	assert.Empty(t, stdout)
	for _, want := range []string{"usage: lockbench", "-pairs", "-goroutines", "-locks", "-rounds", "-warmup", "-latency",
		"-workload", "-format", "mutex.Mutex/detect=order", "floor.GoidLock",
		"A .depthN lock is a monitor.Monitor (or monitor.RWMonitor) held N-1 times",
		"Read-write locks (-workload rw): sync.RWMutex, mutex.RWMutex/detect=off", "go-deadlock.RWMutex"} {
		assert.Contains(t, stderr, want)
	}
}

// TestDepthAndFloorExplained: the tables say what the depthN rows and the
// floor row are, in the output itself.
func TestDepthAndFloorExplained(t *testing.T) {
	code, stdout, stderr := runArgs(t, append([]string{"-quiet"}, tiny...)...)
	require.Equal(t, exitOK, code, stderr)
	stdout = unwrapped(stdout)
	pairs := stdout[strings.Index(stdout, "Uncontended"):strings.Index(stdout, "Two nested")]
	assert.Contains(t, pairs, "monitor.Monitor.depth2 and .depth8 (depthN) measure a Monitor at N holds: "+
		"the measured pair is a re-entry by a goroutine that already holds the monitor N-1 times")
	assert.Contains(t, pairs, "vs floor against floor.GoidLock (one atomic word holding the owner's goroutine ID")
	contended := stdout[strings.Index(stdout, "Contended"):]
	assert.Contains(t, contended, "each critical section takes the monitor once, re-enters it N-1 times")
}

// TestBaselinesAlwaysIncluded: whatever -locks chooses, sync.Mutex and the
// floor lock come first, since every ratio is taken against them.
func TestBaselinesAlwaysIncluded(t *testing.T) {
	for _, locks := range []string{"mutex.Mutex/detect=off", "floor.GoidLock,mutex.Mutex/detect=off", "sync.Mutex,mutex.Mutex/detect=off"} {
		cfg, err := parseArgs([]string{"-locks", locks}, io.Discard)
		require.NoError(t, err)
		assert.Equal(t, []string{"sync.Mutex", "floor.GoidLock", "mutex.Mutex/detect=off"}, bench.Names(cfg.locks), locks)
		assert.Equal(t, []string{"sync.RWMutex"}, bench.Names(cfg.rwLocks), "%s: the read-write baseline", locks)
	}
	// One pattern may select from both catalogues; sync.RWMutex is a row
	// of each (its write lock as a Mutex, and the read-write baseline).
	cfg, err := parseArgs([]string{"-locks", "sync.RWMutex,mutex.RWMutex/detect=off"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, []string{"sync.Mutex", "floor.GoidLock", "sync.RWMutex"}, bench.Names(cfg.locks))
	assert.Equal(t, []string{"sync.RWMutex", "mutex.RWMutex/detect=off"}, bench.Names(cfg.rwLocks))
	cfg, err = parseArgs(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, bench.Names(bench.RWLocks()), bench.Names(cfg.rwLocks), "all by default")
}

// TestRW: -workload rw measures the read-write locks' read and write
// pairs and the read-mostly mixes, against sync.RWMutex, and nothing else.
func TestRW(t *testing.T) {
	code, stdout, stderr := runArgs(t, append([]string{"-workload", "rw", "-quiet"}, tiny...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stdout, "Uncontended:", "-workload rw runs the read-write tables only")
	assert.NotContains(t, stdout, "Contended:")
	pairs := stdout[strings.Index(stdout, "Read-write locks, uncontended: 1,000 RLock/RUnlock pairs, and 1,000 Lock/Unlock pairs"):strings.Index(stdout, "Read-mostly")]
	mixes := stdout[strings.Index(stdout, "Read-mostly: 400 operations, 90 % or 99 % of them reads"):]
	read := pairs[strings.Index(pairs, "read pairs (RLock/RUnlock)"):strings.Index(pairs, "write pairs (Lock/Unlock)")]
	write := pairs[strings.Index(pairs, "write pairs (Lock/Unlock)"):]
	for _, tbl := range []string{read, write} {
		assert.Regexp(t, `(?m)^sync\.RWMutex\s+\d+\.\d{6}\s+\d+\.\d{6}\s+\d+\.\d{6}\s+\(\s*\d+\.\d{6}\)\s+\S+\s+\S+\s+1\.00x\s+1\.00x$`, tbl,
			"sync.RWMutex is the baseline of each pair table")
		for _, l := range []string{"mutex.RWMutex/detect=cycles", "monitor.RWMonitor/detect=cycles", "monitor.RWMonitor.depth2/detect=cycles", "go-deadlock.RWMutex"} {
			assert.Contains(t, tbl, l+" ")
		}
		assert.NotContains(t, tbl, "mutex.Mutex", "the exclusive locks are not in the read-write tables")
	}
	assert.Contains(t, unwrapped(pairs), "monitor.RWMonitor.depth2 measures a re-entry: a read pair by a goroutine that already holds a read lock")
	for _, h := range []string{"90 % reads, 1 goroutine\n", "90 % reads, 2 goroutines\n", "99 % reads, 1 goroutine\n", "99 % reads, 2 goroutines\n"} {
		assert.Contains(t, mixes, h)
	}
	assert.Regexp(t, `(?m)^sync\.RWMutex\s.*\s1\.00x\s+1\.00x$`, mixes)
	assert.Contains(t, unwrapped(mixes), "against sync.RWMutex at the same read share and goroutine count")
}

// TestLatencyAlone: -latency on its own measures the percentile table and
// nothing else, as -workload latency does; with -workload headline it is
// added to the headline tables.
func TestLatencyAlone(t *testing.T) {
	for _, args := range [][]string{{"-latency"}, {"-workload", "latency"}} {
		code, stdout, stderr := runArgs(t, append(append([]string{"-quiet"}, args...), tiny...)...)
		require.Equal(t, exitOK, code, stderr)
		assert.Contains(t, stdout, "Lock-acquire latency", args)
		assert.Contains(t, stdout, "P99.9", args)
		assert.NotContains(t, stdout, "Uncontended", args)
		assert.NotContains(t, stdout, "Contended:", args)
		assert.Regexp(t, `less the clock's own overhead, [1-9]\d* ns on this machine`, stdout)
		assert.Regexp(t, `The clock moves in steps of about [1-9]\d* ns here`, stdout)
	}
	code, stdout, stderr := runArgs(t, append([]string{"-quiet", "-latency", "-workload", "headline"}, tiny...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "Uncontended")
	assert.Contains(t, stdout, "Lock-acquire latency")
}

func TestText(t *testing.T) {
	code, stdout, stderr := runArgs(t, tiny...)
	require.Equal(t, exitOK, code, stderr)
	for _, want := range []string{
		"Uncontended: 1,000 Lock/Unlock pairs",
		"user      system       total          real  ns/pair",
		"Two nested locks: 100 rounds",
		"Contended: 400 critical sections",
		"1 goroutine\n", "2 goroutines\n",
		"ops/s", "CPU-ns/op", "cores", "cpu ratio",
		"sync.Mutex ", "mutex.Mutex/detect=off", "monitor.Monitor.depth2/detect=off", "spin.TTAS",
		"1.00x", // sync.Mutex against itself
	} {
		assert.Contains(t, stdout, want)
	}
	assert.NotContains(t, stdout, "spin.TAS ", "-locks chose the locks")
	assert.NotContains(t, stdout, "Lock-acquire latency", "no -latency")
	assert.Contains(t, stderr, "lockbench: section 1 of 3, Uncontended", "progress on stderr")
	assert.Contains(t, stderr, "done in")
	// Ruby's Benchmark.bm shape: four times, the real one in parentheses.
	assert.Regexp(t, `(?m)^sync\.Mutex\s+\d+\.\d{6}\s+\d+\.\d{6}\s+\d+\.\d{6}\s+\(\s*\d+\.\d{6}\)`, stdout)
}

func TestQuiet(t *testing.T) {
	code, _, stderr := runArgs(t, append([]string{"-quiet"}, tiny...)...)
	require.Equal(t, exitOK, code)
	assert.Empty(t, stderr)
}

// TestMarkdown: the markdown page is BENCHMARKS.md as one command makes
// it: the command, the machine, the targets, ratio tables with the floor.
func TestMarkdown(t *testing.T) {
	code, stdout, stderr := runArgs(t, append([]string{"-format", "markdown", "-quiet"}, tiny...)...)
	require.Equal(t, exitOK, code, stderr)
	env := bench.Environment()
	assert.True(t, strings.HasPrefix(stdout, "# Benchmarks\n"))
	// The command remakes the page from scratch: the run's JSON, the page
	// rendered from it, the charts drawn from it; the flags that chose
	// this output are not part of it.
	assert.Contains(t, stdout, "```sh\ngo run ./bench/cmd/lockbench -format json -pairs 1000 ")
	assert.NotContains(t, stdout, "-format markdown -quiet")
	assert.Contains(t, stdout, " > docs/benchmarks.json &&\n"+
		"  go run ./bench/cmd/lockbench -from docs/benchmarks.json -format markdown > BENCHMARKS.md &&\n"+
		"  go run ./bench/cmd/lockplot -out docs docs/benchmarks.json\n```")
	assert.Contains(t, stdout, "![CPU time per million uncontended Lock/Unlock pairs](docs/reentry.svg)")
	assert.Contains(t, stdout, "![Throughput and CPU time per critical section against goroutines](docs/contended.svg)")
	assert.NotContains(t, stdout, "docs/rwmix.svg", "no read-mostly chart without the read-mostly section")
	assert.Contains(t, stdout, "**In short.** CPU time per uncontended pair, locksmith in detect=off")
	assert.Contains(t, stdout, "| CPU | "+env.CPU+" |")
	assert.Contains(t, stdout, fmt.Sprintf("| Cores | %d (GOMAXPROCS %d) |", env.NumCPU, env.GOMAXPROCS))
	assert.Contains(t, stdout, "| Go | "+env.GoVersion)
	assert.Contains(t, stdout, "**Where ratios depend on the CPU.**")
	assert.Contains(t, stdout, "## Targets")
	assert.Regexp(t, "\\| `mutex.Mutex` pair vs floor pair \\| \\d+\\.\\d\\dx \\| \\d+\\.\\d\\d–\\d+\\.\\d\\d \\| ≤ 1.00x \\| (yes|no) \\|", stdout)
	assert.Regexp(t, "\\| `monitor.Monitor` re-entry pair \\(depth2\\) vs floor pair \\| \\d+\\.\\d\\dx \\| \\d+\\.\\d\\d–\\d+\\.\\d\\d \\| ≤ 0.80x", stdout)
	assert.Contains(t, stdout, "### Uncontended: 1,000 Lock/Unlock pairs")
	assert.Contains(t, stdout, "| lock | vs floor | IQR | vs sync.Mutex | IQR |")
	assert.Contains(t, stdout, "| `floor.GoidLock` | 1.00x |")
	assert.NotContains(t, stdout, "ns/pair", "ratios, not times")
	assert.Contains(t, stdout, "| :--- |")
	assert.Contains(t, stdout, "**2 goroutines**")
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "|") {
			assert.True(t, strings.HasSuffix(line, "|"), "table row %q", line)
		}
	}
}

// TestMarkdownRW: with the read-write tables, the page checks the
// read-write targets against sync.RWMutex and lays out ratio tables.
func TestMarkdownRW(t *testing.T) {
	code, stdout, stderr := runArgs(t, append([]string{"-format", "markdown", "-quiet", "-workload", "rw"}, tiny...)...)
	require.Equal(t, exitOK, code, stderr)
	for _, re := range []string{
		"\\| `mutex.RWMutex` read pair vs `sync.RWMutex` read pair \\| \\d+\\.\\d\\dx \\| \\d+\\.\\d\\d–\\d+\\.\\d\\d \\| ≤ 3.00x \\| (yes|no) \\|",
		"\\| `monitor.RWMonitor` first read pair vs `sync.RWMutex` read pair \\| \\d+\\.\\d\\dx \\| \\d+\\.\\d\\d–\\d+\\.\\d\\d \\| ≤ 3.00x \\| (yes|no) \\|",
		"\\| `monitor.RWMonitor` re-entrant read pair \\(depth2\\) vs `sync.RWMutex` read pair \\| \\d+\\.\\d\\dx \\| \\d+\\.\\d\\d–\\d+\\.\\d\\d \\| ≤ 1.50x \\| (yes|no) \\|",
		"\\| `mutex.RWMutex` write pair vs `sync.RWMutex` write pair \\| \\d+\\.\\d\\dx \\| \\d+\\.\\d\\d–\\d+\\.\\d\\d \\| ≤ 1.50x \\| (yes|no) \\|",
		"\\| `monitor.RWMonitor` write pair vs `sync.RWMutex` write pair \\| \\d+\\.\\d\\dx \\| \\d+\\.\\d\\d–\\d+\\.\\d\\d \\| ≤ 1.50x \\| (yes|no) \\|",
		"\\| `mutex.RWMutex/detect=cycles`, 99 % reads, 2 goroutines: ops/s vs `sync.RWMutex` \\| \\d+\\.\\d\\dx \\| \\d+\\.\\d\\d–\\d+\\.\\d\\d \\| ≥ 0.80x \\| (yes|no) \\|",
		"\\| `monitor.RWMonitor/detect=cycles`, 90 % reads, 1 goroutine: CPU/op vs `sync.RWMutex` \\| \\d+\\.\\d\\dx \\| \\d+\\.\\d\\d–\\d+\\.\\d\\d \\| ≤ 1.30x \\| (yes|no) \\|",
	} {
		assert.Regexp(t, re, stdout)
	}
	assert.Contains(t, stdout, "**read pairs (RLock/RUnlock)**")
	assert.Contains(t, stdout, "**write pairs (Lock/Unlock)**")
	assert.Contains(t, stdout, "| lock | vs sync.RWMutex | IQR | real time vs sync.RWMutex |")
	assert.Contains(t, stdout, "| `sync.RWMutex` | 1.00x |")
	assert.Contains(t, stdout, "**99 % reads, 2 goroutines**")
	assert.Contains(t, stdout, "| lock | ops/s vs sync.RWMutex | IQR | CPU/op vs sync.RWMutex | IQR | cores |")
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "|") {
			assert.True(t, strings.HasSuffix(line, "|"), "table row %q", line)
		}
	}
}

func TestJSON(t *testing.T) {
	code, stdout, stderr := runArgs(t, append([]string{"-format", "json", "-quiet", "-latency", "-workload", "headline"}, tiny...)...)
	require.Equal(t, exitOK, code, stderr)
	var rep report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	assert.Equal(t, runtime.Version(), rep.Env.GoVersion)
	assert.Equal(t, bench.Environment().CPU, rep.Env.CPU)
	assert.NotEmpty(t, rep.Library)
	ts, err := time.Parse(time.RFC3339, rep.Timestamp)
	require.NoError(t, err, "timestamp %q", rep.Timestamp)
	assert.WithinDuration(t, time.Now(), ts, time.Hour)
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &raw))
	for _, k := range []string{"timestamp", "library_version", "env"} {
		assert.Contains(t, raw, k)
	}
	assert.Equal(t, 1, rep.Rounds)
	assert.Positive(t, rep.Work.InsideIters)
	kinds := map[string]*section{}
	for _, s := range rep.Sections {
		kinds[s.Kind] = s
	}
	require.Contains(t, kinds, kindPairs)
	require.Contains(t, kinds, kindNested)
	require.Contains(t, kinds, kindContended)
	require.Contains(t, kinds, kindLatency)
	pairs := kinds[kindPairs]
	assert.Equal(t, "sync.Mutex", pairs.Rows[0].Lock, "the baseline is always first")
	assert.InDelta(t, 1, pairs.Rows[0].Ratio.Median, 1e-9)
	assert.Equal(t, "floor.GoidLock", pairs.Rows[1].Lock, "the floor lock is always second")
	assert.InDelta(t, 1, pairs.Rows[1].FloorRatio.Median, 1e-9)
	assert.Len(t, pairs.Rows, 5)
	for _, r := range pairs.Rows {
		assert.EqualValues(t, 1000, r.Ops)
		assert.Positive(t, r.NsPerOp.Median)
		assert.LessOrEqual(t, r.NsPerOp.Min, r.NsPerOp.Median)
		assert.GreaterOrEqual(t, r.NsPerOp.Max, r.NsPerOp.Median)
	}
	assert.Len(t, kinds[kindContended].Rows, 10, "5 locks at 2 goroutine counts")
	assert.Equal(t, int64(bench.ClockOverhead()), kinds[kindLatency].ClockNs, "the clock overhead subtracted")
	for _, r := range kinds[kindContended].Rows {
		assert.Contains(t, []int{1, 2}, r.Goroutines)
		assert.Positive(t, r.Ratio.Median)
	}
	for _, r := range kinds[kindLatency].Rows {
		require.NotNil(t, r.Latency, r.Lock)
		assert.EqualValues(t, 400, r.Latency.Iterations)
		assert.LessOrEqual(t, r.Latency.Min, r.Latency.P50)
		assert.LessOrEqual(t, r.Latency.P50, r.Latency.P999)
		assert.LessOrEqual(t, r.Latency.P999, r.Latency.Max)
	}
}

func TestCSV(t *testing.T) {
	code, stdout, stderr := runArgs(t, append([]string{"-format", "csv", "-quiet", "-workload", "all"}, tiny...)...)
	require.Equal(t, exitOK, code, stderr)
	recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	assert.Equal(t, csvHeader, recs[0])
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	seen := map[string]bool{}
	for _, r := range recs[1:] {
		require.Len(t, r, len(csvHeader))
		seen[r[col["section"]]] = true
		_, err := time.Parse(time.RFC3339, r[col["timestamp"]])
		assert.NoError(t, err)
		assert.Equal(t, runtime.Version(), r[col["go_version"]])
		assert.Equal(t, bench.Environment().CPU, r[col["cpu"]])
		assert.Equal(t, strconv.Itoa(runtime.NumCPU()), r[col["num_cpu"]])
		assert.NotEmpty(t, r[col["library_version"]])
	}
	for _, k := range []string{kindPairs, kindNested, kindContended, kindPool, kindBatch, kindRWPairs, kindRWMix} {
		assert.True(t, seen[k], "section %s in the CSV (-workload all)", k)
	}
}

func TestWorkloads(t *testing.T) {
	code, stdout, stderr := runArgs(t, append([]string{"-workload", "pool", "-quiet"}, tiny...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "Connection pool (Jetty's workload)")
	assert.Contains(t, stdout, "acquire/s")
	assert.Contains(t, stdout, "release/s")
	assert.Contains(t, stdout, "remove/s")
	assert.NotContains(t, stdout, "Uncontended", "-workload pool runs the pool only")

	code, stdout, stderr = runArgs(t, append([]string{"-workload", "batch", "-quiet"}, tiny...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "Batch queue")
	assert.Contains(t, stdout, "chan")
	assert.Contains(t, stdout, "vs batch 1")
	assert.NotContains(t, stdout, "batchqueue/", "no monitor.Monitor first entry was chosen")

	code, stdout, stderr = runArgs(t, "-workload", "batch", "-quiet", "-items", "100", "-batches", "1,7",
		"-rounds", "1", "-warmup", "0", "-locks", "monitor.Monitor/detect=off")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "batchqueue/monitor.Monitor/detect=off")
}

// TestRWJSONAndCSV: the read-write sections in the machine-readable
// outputs: each row says its access or its read share, and the ratios
// are against sync.RWMutex's row of the same kind.
func TestRWJSONAndCSV(t *testing.T) {
	code, stdout, stderr := runArgs(t, append([]string{"-format", "json", "-quiet", "-workload", "rw"}, tiny...)...)
	require.Equal(t, exitOK, code, stderr)
	var rep report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	require.Len(t, rep.Sections, 2)
	pairs, mixes := rep.Sections[0], rep.Sections[1]
	assert.Equal(t, kindRWPairs, pairs.Kind)
	assert.Equal(t, kindRWMix, mixes.Kind)
	// sync.RWMutex and the four chosen read-write locks, read then write.
	require.Len(t, pairs.Rows, 10)
	for i, r := range pairs.Rows {
		want := accessRead
		if i >= 5 {
			want = accessWrite
		}
		assert.Equal(t, want, r.Access, r.Lock)
		assert.EqualValues(t, 1000, r.Ops)
		assert.Positive(t, r.CPURatio.Median, r.Lock)
	}
	assert.Equal(t, "sync.RWMutex", pairs.Rows[0].Lock)
	assert.Equal(t, "sync.RWMutex", pairs.Rows[5].Lock)
	assert.InDelta(t, 1, pairs.Rows[0].Ratio.Median, 1e-9)
	assert.InDelta(t, 1, pairs.Rows[5].Ratio.Median, 1e-9)
	assert.InDelta(t, pairs.Rows[1].NsPerOp.Median/pairs.Rows[0].NsPerOp.Median, pairs.Rows[1].Ratio.Median, 1e-9, "read against read")
	assert.InDelta(t, pairs.Rows[6].NsPerOp.Median/pairs.Rows[5].NsPerOp.Median, pairs.Rows[6].Ratio.Median, 1e-9, "write against write")
	require.Len(t, mixes.Rows, 2*2*5, "2 read shares, 2 goroutine counts, 5 locks")
	for _, r := range mixes.Rows {
		assert.Contains(t, []int{90, 99}, r.Reads, r.Lock)
		assert.Contains(t, []int{1, 2}, r.Goroutines, r.Lock)
		assert.Positive(t, r.Ratio.Median, r.Lock)
		if r.Lock == "sync.RWMutex" {
			assert.InDelta(t, 1, r.Ratio.Median, 1e-9)
			assert.InDelta(t, 1, r.CPURatio.Median, 1e-9)
		}
	}

	code, stdout, stderr = runArgs(t, append([]string{"-format", "csv", "-quiet", "-workload", "rw"}, tiny...)...)
	require.Equal(t, exitOK, code, stderr)
	recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	require.NoError(t, err)
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	require.Len(t, recs, 1+10+20)
	for _, r := range recs[1:] {
		switch r[col["section"]] {
		case kindRWPairs:
			assert.Contains(t, []string{"read", "write"}, r[col["access"]])
			assert.Empty(t, r[col["reads_percent"]])
		case kindRWMix:
			assert.Contains(t, []string{"90", "99"}, r[col["reads_percent"]])
			assert.Empty(t, r[col["access"]])
		default:
			t.Errorf("unexpected section %q", r[col["section"]])
		}
	}
}

func TestStatOf(t *testing.T) {
	assert.Equal(t, stat{Median: 2, Min: 1, Max: 3}, statOf([]float64{3, 1, 2}))
	assert.Equal(t, stat{Median: 2.5, Min: 1, Max: 4}, statOf([]float64{4, 1, 3, 2}))
	assert.Equal(t, stat{}, statOf(nil))
}

func TestFormatting(t *testing.T) {
	assert.Equal(t, "1,000,000", count(1000000))
	assert.Equal(t, "999", count(999))
	assert.Equal(t, "-1,000", count(-1000))
	assert.Equal(t, "6.71M", rate(6.71e6))
	assert.Equal(t, "950k", rate(950e3))
	assert.Equal(t, "12", rate(12))
	assert.Equal(t, "1.25x", times(1.25))
	assert.Equal(t, "–", times(0))
	assert.Equal(t, "12.90", ns(12.9))
	assert.Equal(t, "137.0", ns(137))
	assert.Equal(t, "  0.012896", secs(12896000))
}

// TestSoak runs a short soak: every detect mode, then mode switches, then
// the bubble phases, every primitive, no anomalies, exit status 0, and the
// counts on stdout.
func TestSoak(t *testing.T) {
	saved := soakPhases
	defer func() { soakPhases = saved }()
	// The stranding phase leaves goroutines blocked for good: it runs in
	// a process of its own, TestSoakStranding's.
	soakPhases = slices.DeleteFunc(slices.Clone(soakPhases), func(p soakPhase) bool { return p.strand })
	code, stdout, stderr := runArgs(t, "-soak", "600ms")
	require.Equal(t, exitOK, code, "stderr:\n%s\nstdout:\n%s", stderr, stdout)
	for _, mode := range []string{"mode off", "mode cycles", "mode order"} {
		assert.Contains(t, stdout, "stress: "+mode)
	}
	for _, prim := range []string{"mutex.Mutex", "monitor.Monitor", "condvar.Cond(*sync.Mutex)", "condvar.Cond(*mutex.Mutex)", "condvar.Cond(*monitor.Monitor)",
		"mutex.RWMutex", "monitor.RWMonitor"} {
		assert.Contains(t, stdout, prim)
	}
	assert.Contains(t, stdout, ", 0 anomalies")
	assert.Contains(t, stderr, "soak: 100ms in detect mode order\n")
	assert.Contains(t, stderr, "soak: 100ms switching detect modes while locks are held\n")
	assert.Contains(t, stdout, "switched between off, cycles and order")
	if bubblesSupported {
		assert.Contains(t, stderr, "soak: 100ms in detect mode order, with locks shared across synctest bubbles\n")
		assert.Contains(t, stderr, "soak: 100ms switching detect modes while locks are held, with locks shared across synctest bubbles\n")
		assert.Equal(t, 2, strings.Count(stdout, "bubbles: locks shared by goroutines outside any bubble and those of two synctest bubbles\nstress: "))
		assert.NotContains(t, stdout, "PASS", "the bubble runner's output stays out of the results")
	} else {
		assert.Contains(t, stderr, "the synctest bubble phases need go1.25")
	}
}
