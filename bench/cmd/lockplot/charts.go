package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"gonum.org/v1/plot/plotter"
)

// chart is one picture lockplot draws.
type chart struct {
	name string // -chart's value
	file string // its file under -out
	has  func(*report) bool
	// draw draws the chart; reads, if not 0, keeps one read share of the
	// read-mostly chart.
	draw func(rep *report, reads int) (*figure, error)
}

var charts = []chart{
	{name: "reentry", file: "reentry.svg", has: hasKind(kindPairs), draw: reentryChart},
	{name: "contended", file: "contended.svg", has: hasKind(kindContended), draw: contendedChart},
	{name: "rwmix", file: "rwmix.svg", has: hasKind(kindRWMix), draw: rwMixChart},
}

func hasKind(kind string) func(*report) bool {
	return func(rep *report) bool {
		s := sectionOf(rep, kind)
		return s != nil && len(s.Rows) > 0
	}
}

// maxSeries is the most locks a panel draws: beyond about eight, lines
// share colours and a reader can no longer tell them apart. The tables
// in BENCHMARKS.md have every lock.
const maxSeries = 8

// floorName is bench.FloorName; lockplot reads JSON and imports nothing
// of the benchmarks.
const floorName = "floor.GoidLock"

// modes lists a locksmith lock's rows in the order a chart prefers them:
// the default detection mode (Cycles, whose fast paths are Off's), then
// Off, then Order, so that a run with -locks limited to one mode still
// draws the lock.
func modes(name string) []string {
	return []string{name + "/detect=cycles", name + "/detect=off", name + "/detect=order"}
}

// The locks each chart draws, in legend order; each entry lists
// alternatives, and the first the run has is drawn.
var (
	reentryLocks = [][]string{
		{"sync.Mutex"}, {floorName},
		modes("mutex.Mutex"), modes("monitor.Monitor"),
		modes("monitor.Monitor.depth2"), modes("monitor.Monitor.depth8"),
		{"monitor.Monitor/detect=order"}, {"go-deadlock.Mutex"},
	}
	contendedLocks = [][]string{
		{"sync.Mutex"}, {floorName},
		modes("mutex.Mutex"), modes("monitor.Monitor"), modes("monitor.Monitor.depth8"),
		{"spin.TTAS", "spin.TAS"}, {"chan"}, {"go-deadlock.Mutex"},
	}
	rwMixLocks = [][]string{
		{"sync.RWMutex"},
		modes("mutex.RWMutex"), modes("monitor.RWMonitor"), modes("monitor.RWMonitor.depth2"),
		{"mutex.RWMutex/detect=order"}, {"go-deadlock.RWMutex"},
	}
)

// pick returns the locks of prefs that sec has, one per entry (its first
// alternative that sec has), without repeats, at most maxSeries.
func pick(sec *section, prefs [][]string) []string {
	var out []string
	for _, alts := range prefs {
		for _, name := range alts {
			if slices.ContainsFunc(sec.Rows, func(r *row) bool { return r.Lock == name }) {
				if !slices.Contains(out, name) {
					out = append(out, name)
				}
				break
			}
		}
	}
	return out[:min(len(out), maxSeries)]
}

// reentryChart draws the uncontended pairs as horizontal bars of CPU time
// per million pairs, labelled with the paired ratios to sync.Mutex and
// to the floor lock. When the dearest lock is more than logRatio times
// the cheapest (go-deadlock, Order mode), the locks more than splitRatio
// times the first, sync.Mutex, go to a second panel with a log axis, so
// that the question the chart answers, a Monitor against a Mutex, keeps
// a linear axis of its own.
func reentryChart(rep *report, _ int) (*figure, error) {
	sec := sectionOf(rep, kindPairs)
	if sec == nil {
		return nil, errors.New("no uncontended pairs to plot (lockbench -workload headline or all has them)")
	}
	names := pick(sec, reentryLocks)
	if len(names) == 0 {
		return nil, errors.New("none of the uncontended pairs' locks is one the chart draws")
	}
	var bs []bar
	for _, n := range names {
		r := rowNamed(sec, n, 0, 0)
		b := bar{name: n, value: r.CPUNsPerOp.Median * 1e6 / 1e6} // ns per pair = ms per million pairs
		b.label = fmt.Sprintf("%s ms", short(b.value))
		var rs []string
		if n != "sync.Mutex" && r.CPURatio != nil && r.CPURatio.Median > 0 {
			rs = append(rs, fmt.Sprintf("%.2fx sync.Mutex", r.CPURatio.Median))
		}
		if n != floorName && r.FloorCPU != nil && r.FloorCPU.Median > 0 {
			rs = append(rs, fmt.Sprintf("%.2fx floor", r.FloorCPU.Median))
		}
		if len(rs) > 0 {
			b.label += " (" + strings.Join(rs, ", ") + ")"
		}
		bs = append(bs, b)
	}
	vals := make([]float64, len(bs))
	for i, b := range bs {
		vals[i] = b.value
	}
	panels := []barPanel{{title: "Owner checks and reentrancy", bars: bs}}
	if needsLog(vals) {
		var near, far []bar
		for _, b := range bs {
			if b.value <= splitRatio*bs[0].value {
				near = append(near, b)
			} else {
				far = append(far, b)
			}
		}
		panels = []barPanel{
			{title: "Owner checks and reentrancy (linear axis)", bars: near},
			{title: "Deadlock detection on (log axis: each gridline is 10 times the last)", bars: far, log: true},
		}
	}
	title := "CPU time per million uncontended Lock/Unlock pairs, one goroutine (ms; lower is cheaper; ratios paired round by round)"
	return drawBars(title, machine(rep), "ms per million pairs", panels)
}

// contendedChart draws throughput and CPU time per critical section
// against goroutines.
func contendedChart(rep *report, _ int) (*figure, error) {
	sec := sectionOf(rep, kindContended)
	if sec == nil {
		return nil, errors.New("no contended results to plot (lockbench -workload headline or all has them)")
	}
	names := pick(sec, contendedLocks)
	if len(names) == 0 {
		return nil, errors.New("none of the contended locks is one the chart draws")
	}
	gs := goroutinesOf(sec.Rows)
	if err := checkGoroutines(gs); err != nil {
		return nil, err
	}
	title := fmt.Sprintf("Contended: %s critical sections of %s, shared by G goroutines", count(sec.Ops), work(rep))
	col := linePanels(sec.Rows, names, 0, "critical section")
	return drawLines(title, machine(rep), [][]linePanel{{col[0]}, {col[1]}}, names, gs)
}

// rwMixChart draws the read-mostly mixes: a column per read share, with
// throughput above and CPU time per operation below.
func rwMixChart(rep *report, reads int) (*figure, error) {
	sec := sectionOf(rep, kindRWMix)
	if sec != nil && reads != 0 {
		keep := &section{Kind: sec.Kind, Ops: sec.Ops}
		for _, r := range sec.Rows {
			if r.Reads == reads {
				keep.Rows = append(keep.Rows, r)
			}
		}
		sec = keep
	}
	if sec == nil || len(sec.Rows) == 0 {
		if reads != 0 {
			return nil, fmt.Errorf("no read-mostly results with %d %% reads to plot (lockbench -workload rw or all has them, at 90 and 99 %%)", reads)
		}
		return nil, errors.New("no read-mostly results to plot (lockbench -workload rw or all has them)")
	}
	names := pick(sec, rwMixLocks)
	if len(names) == 0 {
		return nil, errors.New("none of the read-mostly mix's locks is one the chart draws")
	}
	var shares []int
	for _, r := range sec.Rows {
		if !slices.Contains(shares, r.Reads) {
			shares = append(shares, r.Reads)
		}
	}
	gs := goroutinesOf(sec.Rows)
	if err := checkGoroutines(gs); err != nil {
		return nil, err
	}
	grid := [][]linePanel{nil, nil}
	for _, reads := range shares {
		col := linePanels(sec.Rows, names, reads, "operation")
		grid[0] = append(grid[0], col[0])
		grid[1] = append(grid[1], col[1])
	}
	title := fmt.Sprintf("Read-mostly: %s operations, each a read or a write critical section of %s, shared by G goroutines", count(sec.Ops), work(rep))
	return drawLines(title, machine(rep), grid, names, gs)
}

// linePanels returns the throughput and the CPU panel of names' rows at
// the read share reads (0 outside the read-mostly mixes).
func linePanels(rows []*row, names []string, reads int, unit string) [2]linePanel {
	prefix := ""
	if reads != 0 {
		prefix = fmt.Sprintf("%d %% reads: ", reads)
	}
	tp := linePanel{title: prefix + unit + "s per second (higher is better)", ylabel: "million per second"}
	cpu := linePanel{title: prefix + "CPU time per " + unit + ", user+system of all cores (lower is cheaper)", ylabel: "CPU-ns per " + unit}
	for _, n := range names {
		var a, b plotter.XYs
		for _, r := range rows {
			if r.Lock == n && r.Reads == reads {
				a = append(a, plotter.XY{X: float64(r.Goroutines), Y: r.OpsPerSec.Median / 1e6})
				b = append(b, plotter.XY{X: float64(r.Goroutines), Y: r.CPUNsPerOp.Median})
			}
		}
		tp.lines = append(tp.lines, a)
		cpu.lines = append(cpu.lines, b)
	}
	return [2]linePanel{tp, cpu}
}

// rowNamed returns sec's row of the lock name at g goroutines and reads
// percent reads.
func rowNamed(sec *section, name string, g, reads int) *row {
	for _, r := range sec.Rows {
		if r.Lock == name && r.Goroutines == g && r.Reads == reads {
			return r
		}
	}
	return nil
}

// goroutinesOf returns the goroutine counts of rows, ascending, once each.
func goroutinesOf(rows []*row) []int {
	var gs []int
	for _, r := range rows {
		if !slices.Contains(gs, r.Goroutines) {
			gs = append(gs, r.Goroutines)
		}
	}
	slices.Sort(gs)
	return gs
}

// checkGoroutines: the goroutine axis is logarithmic, over at least two
// counts.
func checkGoroutines(gs []int) error {
	if len(gs) < 2 || slices.Min(gs) < 1 {
		return fmt.Errorf("goroutine counts %v: the chart needs two or more, all positive (lockbench -goroutines)", gs)
	}
	return nil
}

// short formats v with three significant digits.
func short(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// count formats n with thousands separators.
func count(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
