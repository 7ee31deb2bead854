package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/locksmith-go/locksmith/bench"
)

// writeDocument writes rep as a Markdown page meant to be BENCHMARKS.md:
// the machine and the command that made it, the targets with the ratios
// measured against them, every table as ratios (the median of the
// per-round ratios, and their interquartile range), and how to read
// them. Only the latency table is in nanoseconds: a percentile has no
// baseline to divide by.
func writeDocument(w io.Writer, rep *report) error {
	ew := &errWriter{w: w}
	e := rep.Env
	ew.printf("# Benchmarks\n\n")
	ew.printf("What owner tracking, reentrancy and deadlock detection cost, as ratios to `sync.Mutex` and to a floor lock, "+
		"measured in one process. This page, its charts and `%s` (the run's JSON report) come from one run, "+
		"made and rendered by one command from the repository root:\n\n```sh\n%s\n```\n\n"+
		"The first step measures (it takes the longest: its plan on stderr says about how long); the other two only "+
		"render its JSON, so that the tables and the charts are the same run's, and a change to how they are laid out "+
		"needs no new measurement.\n\n", reportFile, regenerate(rep.Args))
	ew.printf("| Run | |\n| :--- | :--- |\n")
	ew.printf("| CPU | %s |\n| Cores | %d (GOMAXPROCS %d) |\n| Go | %s %s/%s |\n| locksmith | %s |\n| Started | %s |\n",
		e.CPU, e.NumCPU, e.GOMAXPROCS, e.GoVersion, e.GOOS, e.GOARCH, rep.Library, rep.Timestamp)
	ew.printf("| Rounds | %d counted after %d warm-up, the locks visited in turn in each round, in reverse order every other round |\n",
		rep.Rounds, rep.Warmup)
	if len(rep.Load) == 2 {
		ew.printf("| Load average | %.1f at the start, %.1f at the end, on %d cores%s |\n", rep.Load[0], rep.Load[1], e.NumCPU,
			map[bool]string{true: ": other work shared the CPUs, so the figures are noisy", false: ""}[max(rep.Load[0], rep.Load[1]) > float64(e.NumCPU)])
	}
	ew.printf("\n")
	if lines := summary(rep); len(lines) > 0 {
		ew.printf("**In short.** %s\n\n", strings.TrimPrefix(lines[0], "Summary: "))
		for _, l := range lines[1:] {
			ew.printf("- %s\n", strings.TrimSpace(l))
		}
		ew.printf("\n")
	}
	writeCharts(ew, rep)
	ew.printf("%s\n", docIntro)

	if len(rep.Targets) > 0 {
		ew.printf("\n## Targets\n\n%s\n\n", targetsIntro)
		t := table{header: []string{"question", "measured", "IQR", "target", "met"}}
		for _, tg := range rep.Targets {
			op := "≥"
			if tg.AtMost {
				op = "≤"
			}
			t.rows = append(t.rows, []string{tg.Question, fmt.Sprintf("%.2fx", tg.Ratio.Median), iqr(&tg.Ratio),
				fmt.Sprintf("%s %.2fx", op, tg.Bound), map[bool]string{true: "yes", false: "no"}[tg.Met]})
		}
		writeMarkdown(ew, t)
	}
	ew.printf("\n## Tables\n")
	for _, sec := range rep.Sections {
		note, tables := docLayout(sec)
		ew.printf("\n### %s\n\n%s\n", sec.Title, note)
		for _, t := range tables {
			writeMarkdown(ew, t)
		}
	}
	ew.printf("\n%s", docReading)
	return ew.err
}

// reportFile is where the regeneration command keeps the run's JSON
// report, beside the charts lockplot draws from it.
const reportFile = "docs/benchmarks.json"

// regenerate returns the command that remakes the page from scratch:
// lockbench with args (less the flags that choose the output) writes the
// JSON report, lockbench -from renders this page from it, and lockplot
// draws the charts.
func regenerate(args []string) string {
	var keep []string
	for i := 0; i < len(args); i++ {
		a := "-" + strings.TrimLeft(args[i], "-")
		switch {
		case a == "-format" || a == "-from":
			i++ // and its value
			continue
		case strings.HasPrefix(a, "-format=") || strings.HasPrefix(a, "-from=") || a == "-quiet":
			continue
		}
		keep = append(keep, args[i])
	}
	measure := strings.Join(append([]string{"go run ./bench/cmd/lockbench -format json"}, keep...), " ")
	return measure + " > " + reportFile + " &&\n" +
		"  go run ./bench/cmd/lockbench -from " + reportFile + " -format markdown > BENCHMARKS.md &&\n" +
		"  go run ./bench/cmd/lockplot -out docs " + reportFile
}

// docCharts are lockplot's charts, each shown when the run has its
// section.
var docCharts = []struct {
	kind, file, alt, caption string
}{
	{kindPairs, "docs/reentry.svg", "CPU time per million uncontended Lock/Unlock pairs",
		"CPU time per million uncontended Lock/Unlock pairs (ms, the median round), each bar labelled with its paired ratios " +
			"to `sync.Mutex` and to the floor lock; the locks more than 4x `sync.Mutex` (deadlock detection) get a log axis of their own."},
	{kindContended, "docs/contended.svg", "Throughput and CPU time per critical section against goroutines",
		"Contended: throughput (top) and CPU time per critical section (bottom) against goroutines, eight of the locks " +
			"(the tables below have all); an axis whose figures span more than 4x is logarithmic."},
	{kindRWMix, "docs/rwmix.svg", "Read-mostly mixes: throughput and CPU time per operation against goroutines",
		"Read-mostly mixes, 90 % and 99 % reads: throughput (top) and CPU time per operation (bottom) of the read-write locks."},
}

// writeCharts shows the charts of the sections rep has, with the machine
// they were drawn on.
func writeCharts(ew *errWriter, rep *report) {
	first := true
	for _, c := range docCharts {
		if !slices.ContainsFunc(rep.Sections, func(s *section) bool { return s.Kind == c.kind }) {
			continue
		}
		if first {
			ew.printf("## Charts\n\nDrawn by `lockplot` from `%s`, the run these tables come from: %s, %d cores, %s, "+
				"the median of %d rounds per point.\n\n", reportFile, rep.Env.CPU, rep.Env.NumCPU, rep.Env.GoVersion, rep.Rounds)
			first = false
		}
		ew.printf("![%s](%s)\n\n%s\n\n", c.alt, c.file, c.caption)
	}
}

const docIntro = "Ratios, not times: a ratio taken in one process, with the locks measured in turn, survives a noisy or " +
	"shared machine far better than a nanosecond figure, and says what a user will see relative to what they use now. " +
	"**Every ratio is paired, round by round:** each round runs every lock once, and a lock's ratio to its baseline is " +
	"taken within the round, from two runs moments apart; a table shows the median of those per-round ratios and their " +
	"interquartile range (**IQR**: half the rounds fall inside it). A ratio of two medians, each possibly from a different " +
	"round, would let a machine that runs slower for a few seconds (a virtual CPU changing state, a neighbour's load) " +
	"fall on one side of the ratio only. The rounds visit the locks in turn, in reverse order every other round, so that " +
	"no lock always follows the same one. " +
	"`floor.GoidLock` (`bench.FloorLock`) is a measuring stick, not a lock to use: " + floorNote + ". " +
	"A locksmith lock can beat it only by doing that work in fewer instructions: on amd64 their Lock and Unlock " +
	"are one call each into assembly, where the floor lock's Lock is a call that calls `goid`'s assembly.\n\n" +
	"**Where ratios depend on the CPU.** An owner-checked lock pays what `sync.Mutex` pays (a CompareAndSwap or an " +
	"atomic add per call) plus a goroutine-ID read and a call per Lock and per Unlock. The extra part costs about " +
	"the same on every CPU; the atomics do not: on some CPUs a `sync.Mutex` pair takes 12 ns, on others 5 ns. So the " +
	"dearer the atomics, the closer the uncontended ratios to `sync.Mutex` come to 1, and a Monitor re-entry, which " +
	"makes no atomic write, looks cheaper against `sync.Mutex` the slower the atomics are: ratios to `sync.Mutex` hold " +
	"for the CPU named above only. Ratios to the floor lock, which pays the same atomics and an ID read, move much " +
	"less between machines. The contended ratios depend on the core count and on the scheduler more than on the CPU " +
	"model; on a machine shared with other work (cores well under GOMAXPROCS in the contended tables) their " +
	"throughput ratios swing widely from round to round, and the CPU-per-op ratios are the steadier figure."

const targetsIntro = "Read off the tables below (medians of the per-round ratios, with their IQR; Monitor against Mutex is " +
	"taken round by round too, from the two rows' CPU times in the same round; uncontended figures in CPU time per op; locksmith's locks in the " +
	"default detection mode, Cycles, whose fast paths are those of Off; the read-write locks against `sync.RWMutex`). The floor lock cannot be re-entered, so the re-entry target compares a " +
	"Monitor's re-entry pair with the floor lock's plain pair, the least any pair that checks the owner costs. " +
	"\"no\" is reported as measured, not hidden: the tables and the README say what limits it."

const docReading = `## Reading the tables

- Every ratio is the median, over the counted rounds, of the lock's figure in a round over its baseline's in the
  same round; **IQR** is the interquartile range of those per-round ratios (the 25th to the 75th percentile,
  interpolated between rounds): half the rounds fall inside it, a quarter below and a quarter above.
- **vs floor** and **vs sync.Mutex** (uncontended and nested tables) are the lock's CPU time per op over the
  baseline's.
- **ops/s** and **CPU/op** (contended) are against ` + "`sync.Mutex`" + ` at the same goroutine count: ops/s above 1 is
  faster, CPU/op above 1 burns more of the machine per critical section (user+system time of the whole process,
  so a lock that spins, or a scheduler that spins looking for work, shows here even when throughput looks good).
  **cores** is CPU time over real time.
- ` + "`monitor.Monitor.depth2`" + ` and ` + "`.depth8`" + `: in the uncontended table, a re-entry pair by a goroutine
  already holding the monitor 1 or 7 times; in the contended tables, a critical section that takes the monitor
  and re-enters it 1 or 7 times.
- The read-write tables (` + "`-workload rw`" + `, part of ` + "`all`" + `) take ` + "`sync.RWMutex`" + ` as the baseline instead:
  read pairs against its read pair, write pairs against its write pair, and the read-mostly mixes against it at the
  same read share and goroutine count. ` + "`monitor.RWMonitor.depth2`" + ` is a re-entry in the same mode.
- ` + "`detect=off|cycles|order`" + ` is the detection mode in force (` + "`detect.Configure`" + `) while that row ran.
- The latency table is in nanoseconds on this machine, with the clock's own overhead subtracted (its note says how).
- ` + "`go run ./bench/cmd/lockbench -compare docs/benchmarks.json`" + ` runs the headline tables at the default round
  count and says, per table, how many of its medians fall inside this page's IQRs: a check of a machine against
  this one, and of the default against the 21 rounds here.

## The Go benchmarks

The same scenarios run under ` + "`testing.B`" + ` for benchstat; uncontended and nested loops call each lock's
methods on its concrete type, as users do:

` + "```sh" + `
go test -run '^$' -bench . -count 10 ./bench/ > new.txt          # every scenario and lock, about 40 minutes on 2 cores
go test -run '^$' -bench 'Uncontended|Reentry' -count 10 ./mutex ./monitor >> new.txt
go run golang.org/x/perf/cmd/benchstat@latest new.txt
` + "```" + `

` + "`go test ./bench/...`" + ` without ` + "`-bench`" + ` runs every benchmark once, so that none of them rots.
`

// docLayout is layout for the document: ratios instead of times, each the
// median of the per-round ratios with their interquartile range (IQR).
func docLayout(sec *section) (string, []table) {
	switch sec.Kind {
	case kindPairs, kindNested:
		t := table{header: []string{"lock", "vs floor", "IQR", "vs sync.Mutex", "IQR", "real time vs sync.Mutex"}}
		for _, r := range sec.Rows {
			t.rows = append(t.rows, []string{md(r.Lock), times(med(r.FloorCPURatio)), iqr(r.FloorCPURatio),
				times(med(r.CPURatio)), iqr(r.CPURatio), times(med(r.Ratio))})
		}
		note := "CPU time per op against the floor lock and against `sync.Mutex`; lower is cheaper. One goroutine runs the loop and " +
			"nothing else in the process runs, so its CPU time is the loop's time on a CPU, which other processes on a shared machine " +
			"do not inflate as they do real time; the last column is the real-time ratio to `sync.Mutex`, for comparison."
		if sec.Kind == kindPairs {
			note += " A `depthN` row is a re-entry pair at N holds."
		}
		return note, []table{t}
	case kindContended:
		var ts []table
		for _, g := range goroutinesOf(sec) {
			t := table{heading: fmt.Sprintf("%d goroutine%s", g, plural(g)),
				header: []string{"lock", "ops/s vs sync.Mutex", "IQR", "CPU/op vs sync.Mutex", "IQR", "cores"}}
			for _, r := range sec.Rows {
				if r.Goroutines != g {
					continue
				}
				t.rows = append(t.rows, []string{md(r.Lock), times(med(r.Ratio)), iqr(r.Ratio), times(med(r.CPURatio)), iqr(r.CPURatio),
					fmt.Sprintf("%.2f", r.Cores.Median)})
			}
			ts = append(ts, t)
		}
		return "Throughput and CPU per critical section against `sync.Mutex` at the same goroutine count; " +
			"a `depthN` row re-enters the monitor N-1 times per critical section.", ts
	case kindRWPairs:
		var ts []table
		for _, access := range []string{accessRead, accessWrite} {
			t := table{heading: accessHeading(access),
				header: []string{"lock", "vs sync.RWMutex", "IQR", "real time vs sync.RWMutex"}}
			for _, r := range sec.Rows {
				if r.Access != access {
					continue
				}
				t.rows = append(t.rows, []string{md(r.Lock), times(med(r.CPURatio)), iqr(r.CPURatio), times(med(r.Ratio))})
			}
			ts = append(ts, t)
		}
		return "CPU time per pair against `sync.RWMutex`'s pair of the same kind; lower is cheaper; the last column is the real-time ratio. " +
			"A `depth2` row is a re-entry: a read pair by a goroutine already holding a read lock, a write pair by the writer.", ts
	case kindRWMix:
		var ts []table
		for _, k := range mixesOf(sec) {
			t := table{heading: fmt.Sprintf("%d %% reads, %d goroutine%s", k.reads, k.g, plural(k.g)),
				header: []string{"lock", "ops/s vs sync.RWMutex", "IQR", "CPU/op vs sync.RWMutex", "IQR", "cores"}}
			for _, r := range sec.Rows {
				if r.Reads != k.reads || r.Goroutines != k.g {
					continue
				}
				t.rows = append(t.rows, []string{md(r.Lock), times(med(r.Ratio)), iqr(r.Ratio), times(med(r.CPURatio)), iqr(r.CPURatio),
					fmt.Sprintf("%.2f", r.Cores.Median)})
			}
			ts = append(ts, t)
		}
		return "Throughput and CPU per operation against `sync.RWMutex` at the same read share and goroutine count; every lock " +
			"runs the same sequence of reads and writes; a `depth2` row re-enters the monitor once per critical section.", ts
	case kindLatency:
		note, ts := layout(sec)
		var out []table
		for _, t := range ts {
			if strings.HasSuffix(t.heading, "nanos") {
				t.heading = strings.TrimSuffix(t.heading, ", nanos") + ", ns"
				for _, r := range t.rows {
					r[0] = md(r[0])
				}
				out = append(out, t)
			}
		}
		return note, out
	case kindPool:
		t := table{header: []string{"lock", "acquire/s vs sync.Mutex", "IQR", "CPU/op vs sync.Mutex", "IQR", "cores"}}
		for _, r := range sec.Rows {
			t.rows = append(t.rows, []string{md(r.Lock), times(med(r.Ratio)), iqr(r.Ratio), times(med(r.CPURatio)), iqr(r.CPURatio),
				fmt.Sprintf("%.2f", r.Cores.Median)})
		}
		return "Acquisitions per second and CPU per pool operation against `sync.Mutex`; the channels that hand " +
			"connections between goroutines cost the same for every lock, so the ratios are smaller than the locks' own difference.", []table{t}
	case kindBatch:
		t := table{header: []string{"queue", "batch", "items/s vs batch 1", "IQR", "cores"}}
		for _, r := range sec.Rows {
			t.rows = append(t.rows, []string{md(r.Lock), strconv.Itoa(r.Batch), times(med(r.Ratio)), iqr(r.Ratio),
				fmt.Sprintf("%.2f", r.Cores.Median)})
		}
		return "Items per second against the same queue moving one item at a time.", []table{t}
	}
	return "", nil
}

// med is the median of a paired ratio; 0, which times shows as "–",
// for none.
func med(r *ratioStat) float64 {
	if r == nil {
		return 0
	}
	return r.Median
}

// iqr formats the interquartile range of a paired ratio's rounds.
func iqr(r *ratioStat) string {
	if r == nil || r.Median == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f–%.2f", r.Q1, r.Q3)
}

func md(name string) string { return "`" + name + "`" }

func floorRow(sec *section) *row {
	for _, r := range sec.Rows {
		if r.Lock == bench.FloorName {
			return r
		}
	}
	return nil
}

// target is one speed target checked against a run: a paired ratio (see
// ratioStat) and the bound its median must meet.
type target struct {
	Question string    `json:"question"`
	Ratio    ratioStat `json:"ratio"`
	AtMost   bool      `json:"at_most"` // the median must be at most Bound; else at least Bound
	Bound    float64   `json:"bound"`
	// Met is judged on the median rounded to two decimals, as the
	// document shows it.
	Met bool `json:"met"`
}

// targets checks the run against the uncontended and contended targets,
// one per target whose locks were measured. It needs the rows' rounds:
// Monitor against Mutex is a ratio between two rows, neither of them a
// baseline, taken round by round as the rows' own ratios are.
func targets(rep *report) []target {
	var pairs, contended, rwPairs, rwMix *section
	for _, s := range rep.Sections {
		switch s.Kind {
		case kindPairs:
			pairs = s
		case kindContended:
			contended = s
		case kindRWPairs:
			rwPairs = s
		case kindRWMix:
			rwMix = s
		}
	}
	var out []target
	check := func(q string, r *ratioStat, atMost bool, bound float64) {
		if r == nil {
			return
		}
		v := math.Round(r.Median*100) / 100 // judged as shown
		met := v <= bound
		if !atMost {
			met = v >= bound
		}
		out = append(out, target{Question: q, Ratio: *r, AtMost: atMost, Bound: bound, Met: met})
	}
	mode := "cycles"
	find := func(sec *section, name string, g int) *row {
		for _, r := range sec.Rows {
			if r.Lock == name && r.Goroutines == g {
				return r
			}
		}
		return nil
	}
	if pairs != nil {
		if find(pairs, "mutex.Mutex/detect=cycles", 0) == nil {
			mode = "off"
		}
		floor := floorRow(pairs)
		mu := find(pairs, "mutex.Mutex/detect="+mode, 0)
		mo := find(pairs, "monitor.Monitor/detect="+mode, 0)
		re := find(pairs, "monitor.Monitor.depth2/detect="+mode, 0)
		if floor != nil && mu != nil {
			check("`mutex.Mutex` pair vs floor pair", mu.FloorCPURatio, true, 1.0)
		}
		if floor != nil && mo != nil {
			check("`monitor.Monitor` first-entry pair vs floor pair", mo.FloorCPURatio, true, 1.0)
		}
		if floor != nil && re != nil {
			check("`monitor.Monitor` re-entry pair (depth2) vs floor pair", re.FloorCPURatio, true, 0.8)
		}
		if mu != nil && mo != nil {
			check("`monitor.Monitor` vs `mutex.Mutex`, first entry", paired(mo, mu, cpuNsPerOp), true, 1.1)
		}
	}
	if contended != nil {
		for _, name := range []string{"mutex.Mutex/detect=" + mode, "monitor.Monitor/detect=" + mode} {
			for _, g := range []int{2, 4, 8} {
				r := find(contended, name, g)
				if r == nil {
					continue
				}
				check(fmt.Sprintf("`%s`, %d goroutines: ops/s vs `sync.Mutex`", name, g), r.Ratio, false, 0.9)
				check(fmt.Sprintf("`%s`, %d goroutines: CPU/op vs `sync.Mutex`", name, g), r.CPURatio, true, 1.2)
			}
		}
	}
	rwMode := "cycles"
	if rwPairs != nil && findRW(rwPairs, "mutex.RWMutex/detect=cycles", accessRead) == nil {
		rwMode = "off"
	}
	if rwPairs != nil {
		for _, t := range []struct {
			q, lock, access string
			target          float64
		}{
			{"`mutex.RWMutex` read pair vs `sync.RWMutex` read pair", "mutex.RWMutex", accessRead, 3},
			{"`monitor.RWMonitor` first read pair vs `sync.RWMutex` read pair", "monitor.RWMonitor", accessRead, 3},
			{"`monitor.RWMonitor` re-entrant read pair (depth2) vs `sync.RWMutex` read pair", "monitor.RWMonitor.depth2", accessRead, 1.5},
			{"`mutex.RWMutex` write pair vs `sync.RWMutex` write pair", "mutex.RWMutex", accessWrite, 1.5},
			{"`monitor.RWMonitor` write pair vs `sync.RWMutex` write pair", "monitor.RWMonitor", accessWrite, 1.5},
		} {
			if r := findRW(rwPairs, t.lock+"/detect="+rwMode, t.access); r != nil {
				check(t.q, r.CPURatio, true, t.target)
			}
		}
	}
	if rwMix != nil {
		for _, name := range []string{"mutex.RWMutex/detect=" + rwMode, "monitor.RWMonitor/detect=" + rwMode} {
			for _, k := range mixesOf(rwMix) {
				for _, r := range rwMix.Rows {
					if r.Lock != name || r.Reads != k.reads || r.Goroutines != k.g {
						continue
					}
					check(fmt.Sprintf("`%s`, %d %% reads, %d goroutine%s: ops/s vs `sync.RWMutex`", name, k.reads, k.g, plural(k.g)), r.Ratio, false, 0.8)
					check(fmt.Sprintf("`%s`, %d %% reads, %d goroutine%s: CPU/op vs `sync.RWMutex`", name, k.reads, k.g, plural(k.g)), r.CPURatio, true, 1.3)
				}
			}
		}
	}
	return out
}

// findRW returns the rwpairs row of the lock name and access.
func findRW(sec *section, name, access string) *row {
	for _, r := range sec.Rows {
		if r.Lock == name && r.Access == access {
			return r
		}
	}
	return nil
}
