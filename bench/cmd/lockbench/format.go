package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/locksmith-go/locksmith/bench"
)

// write writes rep to w in format.
func write(w io.Writer, format string, rep *report) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	case "csv":
		return writeCSV(w, rep)
	case "markdown":
		return writeDocument(w, rep)
	default:
		return writeTables(w, rep, false)
	}
}

// table is a section's data laid out for text or markdown.
type table struct {
	heading string   // a sub-heading, or ""
	header  []string // column names; the first column is left-aligned
	rows    [][]string
}

// errWriter remembers the first write error, so that the writers can
// print freely and check once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}

func writeTables(w io.Writer, rep *report, md bool) error {
	ew := &errWriter{w: w}
	e := rep.Env
	head := fmt.Sprintf("lockbench: %s %s/%s, %s, %d CPUs, GOMAXPROCS %d; locksmith %s; %s",
		e.GoVersion, e.GOOS, e.GOARCH, e.CPU, e.NumCPU, e.GOMAXPROCS, rep.Library, rep.Timestamp)
	info := fmt.Sprintf("%d counted rounds after %d warm-up, in reverse order every other round; tables show the median, with min–max; "+
		"a ratio is the median of the per-round ratios, each taken against the baseline in the same round (json and markdown add their IQR); "+
		"work: %v = %d loop rounds inside, %v = %d outside",
		rep.Rounds, rep.Warmup, dur(rep.Work.InsideNs), rep.Work.InsideIters, dur(rep.Work.OutsideNs), rep.Work.OutsideIters)
	cmd := "go run ./bench/cmd/lockbench " + strings.Join(rep.Args, " ")
	width := wrapWidth()
	if md {
		ew.printf("%s\n\n%s\n\n`%s`\n", head, info, strings.TrimSpace(cmd))
	} else {
		ew.printf("%s\n%s\ncommand: %s\n", wrap(head, width, "  "), wrap(info, width, ""), strings.TrimSpace(cmd))
	}
	for _, sec := range rep.Sections {
		note, tables := layout(sec)
		if md {
			ew.printf("\n### %s\n\n%s\n", sec.Title, note)
		} else {
			ew.printf("\n%s\n%s\n", wrap(sec.Title, width, "  "), wrap(note, width, ""))
		}
		for _, t := range tables {
			if md {
				writeMarkdown(ew, t)
			} else {
				writeText(ew, t)
			}
		}
	}
	if lines := summary(rep); !md && len(lines) > 0 {
		ew.printf("\n")
		for _, l := range lines {
			ew.printf("%s\n", wrap(l, width, "    "))
		}
	}
	return ew.err
}

func writeText(ew *errWriter, t table) {
	if t.heading != "" {
		ew.printf("\n%s\n", t.heading)
	} else {
		ew.printf("\n")
	}
	width := make([]int, len(t.header))
	for _, r := range append([][]string{t.header}, t.rows...) {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	line := func(r []string) {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		ew.printf("%s\n", strings.TrimRight(b.String(), " "))
	}
	line(t.header)
	for _, r := range t.rows {
		line(r)
	}
}

func writeMarkdown(ew *errWriter, t table) {
	if t.heading != "" {
		ew.printf("\n**%s**\n", t.heading)
	}
	ew.printf("\n| %s |\n|", strings.Join(t.header, " | "))
	for i := range t.header {
		if i == 0 {
			ew.printf(" :--- |")
		} else {
			ew.printf(" ---: |")
		}
	}
	ew.printf("\n")
	for _, r := range t.rows {
		ew.printf("| %s |\n", strings.Join(r, " | "))
	}
}

// floorNote says what the floor lock is, in the tables' notes.
const floorNote = "one atomic word holding the owner's goroutine ID, goid.Get and one CompareAndSwap per Lock and per Unlock, " +
	"waiters that only yield: the least owner tracking costs on this machine"

// depthNote starts the explanation of a .depthN lock.
const depthNote = "monitor.Monitor.depth2 and .depth8 (depthN) measure a Monitor at N holds:"

// layout turns a section into an explanatory note and tables.
func layout(sec *section) (string, []table) {
	switch sec.Kind {
	case kindPairs, kindNested:
		unit := "ns/pair"
		if sec.Kind == kindNested {
			unit = "ns/round"
		}
		t := table{header: []string{"", "user", "system", "total", "real", unit, "min–max", "ratio", "vs floor", "CPU ratio", "CPU vs floor"}}
		for _, r := range sec.Rows {
			t.rows = append(t.rows, []string{
				r.Lock,
				secs(r.UserNs), secs(r.SysNs), secs(r.UserNs + r.SysNs), "(" + secs(r.RealNs) + ")",
				ns(r.NsPerOp.Median), ns(r.NsPerOp.Min) + "–" + ns(r.NsPerOp.Max), times(med(r.Ratio)), times(med(r.FloorRatio)),
				times(med(r.CPURatio)), times(med(r.FloorCPURatio)),
			})
		}
		note := "user, system, total and real are seconds (Ruby's Benchmark.bm) from the round with the median real time; ratio is " +
			unit + " against sync.Mutex, vs floor against " + bench.FloorName + " (" + floorNote + "); " +
			"the CPU ratios are the same for the process's CPU time per op, which other processes on a shared machine do not inflate."
		if sec.Kind == kindPairs {
			note += " " + depthNote + " the measured pair is a re-entry by a goroutine that already holds the monitor N-1 times " +
				"(hold count N-1 → N → N-1). The floor lock cannot re-enter, so its pair, the least a pair that checks the owner costs, " +
				"is the yardstick for re-entry too."
		}
		return note, []table{t}
	case kindContended:
		var ts []table
		for _, g := range goroutinesOf(sec) {
			t := table{heading: fmt.Sprintf("%d goroutine%s", g, plural(g)),
				header: []string{"lock", "ops/s", "min–max", "CPU-ns/op", "min–max", "cores", "ratio", "cpu ratio"}}
			for _, r := range sec.Rows {
				if r.Goroutines != g {
					continue
				}
				t.rows = append(t.rows, []string{
					r.Lock,
					rate(r.OpsPerSec.Median), rate(r.OpsPerSec.Min) + "–" + rate(r.OpsPerSec.Max),
					ns(r.CPUNsPerOp.Median), ns(r.CPUNsPerOp.Min) + "–" + ns(r.CPUNsPerOp.Max),
					fmt.Sprintf("%.2f", r.Cores.Median), times(med(r.Ratio)), times(med(r.CPURatio)),
				})
			}
			ts = append(ts, t)
		}
		return "CPU-ns/op is the process's user+system CPU time per critical section, all cores together; cores is CPU time over real time; " +
			"ratio is ops/s and cpu ratio CPU-ns/op, each against sync.Mutex at the same goroutine count. " +
			depthNote + " each critical section takes the monitor once, re-enters it N-1 times, and releases all N holds. " +
			"The floor lock's waiters only yield, never park.", ts
	case kindRWPairs:
		var ts []table
		for _, access := range []string{accessRead, accessWrite} {
			t := table{heading: accessHeading(access),
				header: []string{"", "user", "system", "total", "real", "ns/pair", "min–max", "ratio", "CPU ratio"}}
			for _, r := range sec.Rows {
				if r.Access != access {
					continue
				}
				t.rows = append(t.rows, []string{
					r.Lock,
					secs(r.UserNs), secs(r.SysNs), secs(r.UserNs + r.SysNs), "(" + secs(r.RealNs) + ")",
					ns(r.NsPerOp.Median), ns(r.NsPerOp.Min) + "–" + ns(r.NsPerOp.Max), times(med(r.Ratio)), times(med(r.CPURatio)),
				})
			}
			ts = append(ts, t)
		}
		return "user, system, total and real are seconds from the round with the median real time; ratio is ns/pair against " +
			"sync.RWMutex's pair of the same kind, CPU ratio the same for the process's CPU time per pair. " + rwDepthNote +
			" a read pair by a goroutine that already holds a read lock (holds 1 → 2 → 1), a write pair by one that holds the write lock.", ts
	case kindRWMix:
		var ts []table
		for _, k := range mixesOf(sec) {
			t := table{heading: fmt.Sprintf("%d %% reads, %d goroutine%s", k.reads, k.g, plural(k.g)),
				header: []string{"lock", "ops/s", "min–max", "CPU-ns/op", "min–max", "cores", "ratio", "cpu ratio"}}
			for _, r := range sec.Rows {
				if r.Reads != k.reads || r.Goroutines != k.g {
					continue
				}
				t.rows = append(t.rows, []string{
					r.Lock,
					rate(r.OpsPerSec.Median), rate(r.OpsPerSec.Min) + "–" + rate(r.OpsPerSec.Max),
					ns(r.CPUNsPerOp.Median), ns(r.CPUNsPerOp.Min) + "–" + ns(r.CPUNsPerOp.Max),
					fmt.Sprintf("%.2f", r.Cores.Median), times(med(r.Ratio)), times(med(r.CPURatio)),
				})
			}
			ts = append(ts, t)
		}
		return "Each operation is a read (RLock, work reading the shared state, RUnlock) or, otherwise, a write (Lock, work updating it, Unlock), " +
			"drawn from a fixed random sequence per goroutine, the same for every lock. CPU-ns/op is the process's user+system CPU time per operation; " +
			"ratio is ops/s and cpu ratio CPU-ns/op, each against sync.RWMutex at the same read share and goroutine count. " +
			rwDepthNote + " each critical section takes the monitor once and re-enters it once, in the same mode.", ts
	case kindLatency:
		var ts []table
		for _, g := range goroutinesOf(sec) {
			for _, unit := range []string{"nanos", "millis"} {
				t := table{heading: fmt.Sprintf("%d goroutine%s, %s", g, plural(g), unit),
					header: []string{"lock", "Min", "P50", "P90", "P95", "P99", "P99.9", "Max", "Total", "Iterations"}}
				f := func(v int64) string { return strconv.FormatInt(v, 10) }
				if unit == "millis" {
					f = func(v int64) string { return strconv.FormatFloat(float64(v)/1e6, 'f', 6, 64) }
				}
				for _, r := range sec.Rows {
					if r.Goroutines != g {
						continue
					}
					l := r.Latency
					t.rows = append(t.rows, []string{r.Lock, f(l.Min), f(l.P50), f(l.P90), f(l.P95), f(l.P99), f(l.P999), f(l.Max), f(l.Total),
						strconv.FormatInt(l.Iterations, 10)})
				}
				ts = append(ts, t)
			}
		}
		return fmt.Sprintf("Time from calling Lock to holding the lock, every counted round merged (HdrHistogram, 3 significant digits); "+
			"Total is the time all goroutines spent acquiring. Each sample is the interval between two clock reads (time.Now, time.Since) "+
			"less the clock's own overhead, %d ns on this machine (the median of 20,000 empty intervals, measured at start-up), "+
			"so that the table's floor is the lock, not the clock; a sample shorter than that is 0. "+
			"The clock moves in steps of about %d ns here (the smallest difference seen between those intervals), "+
			"so an uncontended acquisition, a few ns, reads as 0 or one step. "+
			"Timing still perturbs the run, so throughput comes from the contended table.", sec.ClockNs, sec.ClockStepNs), ts
	case kindPool:
		t := table{header: []string{"lock", "acquire/s", "min–max", "release/s", "remove/s", "CPU-ns/op", "cores", "ratio"}}
		for _, r := range sec.Rows {
			t.rows = append(t.rows, []string{
				r.Lock,
				rate(r.Acquire.Median), rate(r.Acquire.Min) + "–" + rate(r.Acquire.Max),
				rate(r.Release.Median), rate(r.Remove.Median),
				ns(r.CPUNsPerOp.Median), fmt.Sprintf("%.2f", r.Cores.Median), times(med(r.Ratio)),
			})
		}
		return "Acquirers hand every fourth connection to the remover and the rest to the releasers over buffered channels (the same for every lock). " +
			"CPU-ns/op is per pool operation of any kind; ratio is acquire/s against sync.Mutex.", []table{t}
	case kindBatch:
		t := table{header: []string{"queue", "batch", "items/s", "min–max", "ns/item", "CPU-ns/item", "cores", "vs batch 1"}}
		for _, r := range sec.Rows {
			t.rows = append(t.rows, []string{
				r.Lock, strconv.Itoa(r.Batch),
				rate(r.OpsPerSec.Median), rate(r.OpsPerSec.Min) + "–" + rate(r.OpsPerSec.Max),
				ns(r.NsPerOp.Median), ns(r.CPUNsPerOp.Median), fmt.Sprintf("%.2f", r.Cores.Median), times(med(r.Ratio)),
			})
		}
		return "batchqueue is a monitor.Monitor with two conditions (PutBatch/TakeBatch take the lock once per batch); chan is a buffered channel " +
			"of items (batch 1) or of fresh []int batches; a round repeats the workload for at least " + minBatchTime.String() +
			"; vs batch 1 is items/s against the same queue one item at a time.", []table{t}
	}
	return "", nil
}

// rwDepthNote starts the explanation of the read-write depth2 rows.
const rwDepthNote = "monitor.RWMonitor.depth2 measures a re-entry:"

// accessHeading names the table of an rwpairs section's access.
func accessHeading(access string) string {
	if access == accessRead {
		return "read pairs (RLock/RUnlock)"
	}
	return "write pairs (Lock/Unlock)"
}

// mix is a read share and a goroutine count of the rwmix section.
type mix struct{ reads, g int }

// mixesOf returns the read shares and goroutine counts of sec's rows, in
// order.
func mixesOf(sec *section) []mix {
	var ms []mix
	for _, r := range sec.Rows {
		k := mix{r.Reads, r.Goroutines}
		if len(ms) == 0 || ms[len(ms)-1] != k {
			ms = append(ms, k)
		}
	}
	return ms
}

func goroutinesOf(sec *section) []int {
	var gs []int
	for _, r := range sec.Rows {
		if len(gs) == 0 || gs[len(gs)-1] != r.Goroutines {
			gs = append(gs, r.Goroutines)
		}
	}
	return gs
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func dur(n int64) string { return fmt.Sprint(durationOf(n)) }

func secs(n int64) string { return fmt.Sprintf("%10.6f", float64(n)/1e9) }

func ns(v float64) string {
	switch {
	case v >= 1e5:
		return fmt.Sprintf("%.0f", v)
	case v >= 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// rate formats a per-second rate with three significant digits.
func rate(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.3gG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

func times(r float64) string {
	if r == 0 || math.IsNaN(r) || math.IsInf(r, 0) {
		return "–"
	}
	return fmt.Sprintf("%.2fx", r)
}

// csvHeader is the flat form of a row: one line per row of every section;
// fields a section does not have are empty. The ratio columns are the
// medians of the per-round ratios (see ratioStat), the _q1 and _q3
// columns their interquartile range.
var csvHeader = []string{
	"timestamp", "go_version", "cpu", "num_cpu", "library_version",
	"section", "lock", "goroutines", "batch", "ops", "rounds",
	"user_ns", "sys_ns", "real_ns",
	"ns_per_op", "ns_per_op_min", "ns_per_op_max",
	"ops_per_sec", "ops_per_sec_min", "ops_per_sec_max",
	"cpu_ns_per_op", "cpu_ns_per_op_min", "cpu_ns_per_op_max",
	"cores", "ratio", "cpu_ratio", "floor_ratio", "floor_cpu_ratio",
	"acquire_per_sec", "release_per_sec", "remove_per_sec",
	"lat_min_ns", "lat_p50_ns", "lat_p90_ns", "lat_p95_ns", "lat_p99_ns", "lat_p99_9_ns", "lat_max_ns", "lat_total_ns", "lat_iterations",
	"access", "reads_percent",
	"ratio_q1", "ratio_q3", "cpu_ratio_q1", "cpu_ratio_q3",
	"floor_ratio_q1", "floor_ratio_q3", "floor_cpu_ratio_q1", "floor_cpu_ratio_q3",
}

func writeCSV(w io.Writer, rep *report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	opt := func(n int) string {
		if n == 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	nz := func(v float64) string {
		if v == 0 {
			return ""
		}
		return f(v)
	}
	quartiles := func(r *ratioStat) []string {
		if r == nil || r.Median == 0 {
			return []string{"", ""}
		}
		return []string{f(r.Q1), f(r.Q3)}
	}
	for _, sec := range rep.Sections {
		for _, r := range sec.Rows {
			rec := []string{
				rep.Timestamp, rep.Env.GoVersion, rep.Env.CPU, strconv.Itoa(rep.Env.NumCPU), rep.Library,
				sec.Kind, r.Lock, opt(r.Goroutines), opt(r.Batch), i(r.Ops), strconv.Itoa(r.Rounds),
				i(r.UserNs), i(r.SysNs), i(r.RealNs),
				f(r.NsPerOp.Median), f(r.NsPerOp.Min), f(r.NsPerOp.Max),
				f(r.OpsPerSec.Median), f(r.OpsPerSec.Min), f(r.OpsPerSec.Max),
				f(r.CPUNsPerOp.Median), f(r.CPUNsPerOp.Min), f(r.CPUNsPerOp.Max),
				f(r.Cores.Median), nz(med(r.Ratio)), nz(med(r.CPURatio)), nz(med(r.FloorRatio)), nz(med(r.FloorCPURatio)),
			}
			if r.Acquire != nil {
				rec = append(rec, f(r.Acquire.Median), f(r.Release.Median), f(r.Remove.Median))
			} else {
				rec = append(rec, "", "", "")
			}
			if l := r.Latency; l != nil {
				rec = append(rec, i(l.Min), i(l.P50), i(l.P90), i(l.P95), i(l.P99), i(l.P999), i(l.Max), i(l.Total), i(l.Iterations))
			} else {
				rec = append(rec, make([]string, 9)...)
			}
			rec = append(rec, r.Access, opt(r.Reads))
			for _, q := range []*ratioStat{r.Ratio, r.CPURatio, r.FloorRatio, r.FloorCPURatio} {
				rec = append(rec, quartiles(q)...)
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
