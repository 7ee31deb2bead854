package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/locksmith-go/locksmith/bench"
)

// report is everything a run measured, in the form the writers and the
// JSON output use.
type report struct {
	// Timestamp is when the run started, in UTC (RFC 3339).
	Timestamp string `json:"timestamp"`
	// Library is the version of locksmith measured: the module version,
	// else the VCS revision (with "+dirty" for uncommitted changes), else
	// "(devel)". See libraryVersion.
	Library  string     `json:"library_version"`
	Env      bench.Env  `json:"env"`
	Args     []string   `json:"args"`
	Rounds   int        `json:"rounds"`
	Warmup   int        `json:"warmup"`
	Work     workInfo   `json:"work"`
	Sections []*section `json:"sections"`
	// Targets are the speed targets checked against the run (see
	// targets), in the order the document lists them.
	Targets []target `json:"targets,omitempty"`
	// Load is the machine's one-minute load average when the run started
	// and when it ended (/proc/loadavg; absent where there is none): a
	// load well above the core count means other work shared the CPUs,
	// and the figures are the noisier for it.
	Load []float64 `json:"load_average,omitempty"`
}

// loadAverage returns the one-minute load average, if the system has
// /proc/loadavg.
func loadAverage() (float64, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil
}

type workInfo struct {
	InsideNs     int64 `json:"inside_ns"`
	InsideIters  int   `json:"inside_iters"`
	OutsideNs    int64 `json:"outside_ns"`
	OutsideIters int   `json:"outside_iters"`
}

// Section kinds.
const (
	kindPairs     = "pairs"
	kindNested    = "nested"
	kindContended = "contended"
	kindLatency   = "latency"
	kindPool      = "pool"
	kindBatch     = "batch"
	kindRWPairs   = "rwpairs" // read-write locks: read and write pairs
	kindRWMix     = "rwmix"   // read-write locks: read-mostly mixes
)

// Access values of the rwpairs rows.
const (
	accessRead  = "read"
	accessWrite = "write"
)

// rwReadPercents are the read shares of the read-mostly mixes.
var rwReadPercents = []int{90, 99}

// section is one table.
type section struct {
	Kind  string `json:"kind"`
	Title string `json:"title"`
	Ops   int    `json:"ops"` // operations per round: pairs, critical sections, acquisitions, items per producer
	// ClockNs, in the latency section, is the clock overhead subtracted
	// from every sample (bench.ClockOverhead).
	ClockNs int64 `json:"clock_overhead_ns,omitempty"`
	// ClockStepNs, in the latency section, is bench.ClockStep: about the
	// clock's resolution.
	ClockStepNs int64  `json:"clock_step_ns,omitempty"`
	Rows        []*row `json:"rows"`
}

// stat is a metric over the counted rounds.
type stat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

func statOf(xs []float64) stat {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return stat{}
	}
	return stat{Median: quantile(s, 0.5), Min: s[0], Max: s[len(s)-1]}
}

// ratioStat is a lock's ratio to a baseline over the counted rounds,
// taken round by round: Median is the median of the per-round ratios, Q1
// and Q3 bound their interquartile range (the middle half of the rounds),
// Min and Max are the extremes.
//
// Within a round every lock runs once, moments from its baseline, so the
// ratio of the two in one round is a paired measure: a spell in which the
// machine runs slower (a virtual CPU that switches between a fast and a
// slow state for seconds, a neighbour's load) weighs on both sides of it.
// The ratio of the two medians would not be: each median can come from a
// different round, one from each side of such a change, which on a shared
// virtual CPU can move a ratio by a fifth between runs.
type ratioStat struct {
	Median float64 `json:"median"`
	Q1     float64 `json:"q1"`
	Q3     float64 `json:"q3"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// pairedRatio returns the ratio of xs to bases round by round, xs[k] to
// bases[k], summarised as a ratioStat. A round whose baseline is 0, or
// whose ratio is not finite, has no ratio and is left out; with none
// left, the result is the zero ratioStat, which the writers show as "–".
func pairedRatio(xs, bases []float64) ratioStat {
	rs := make([]float64, 0, len(xs))
	for k := range min(len(xs), len(bases)) {
		if bases[k] == 0 {
			continue
		}
		if r := xs[k] / bases[k]; !math.IsNaN(r) && !math.IsInf(r, 0) {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return ratioStat{}
	}
	slices.Sort(rs)
	return ratioStat{Median: quantile(rs, 0.5), Q1: quantile(rs, 0.25), Q3: quantile(rs, 0.75), Min: rs[0], Max: rs[len(rs)-1]}
}

// quantile returns the p-quantile of the sorted, non-empty s, linearly
// interpolated between the two nearest ranks (the estimate of R's default
// type 7 and numpy's): the median of an even count is the mean of the
// middle two, and the quartiles of 21 rounds are the 6th and 16th values.
func quantile(s []float64, p float64) float64 {
	h := p * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// row is one lock's (or queue's) line in a table.
type row struct {
	Lock       string `json:"lock"`
	Goroutines int    `json:"goroutines,omitempty"`
	Batch      int    `json:"batch,omitempty"`
	// Access, in the rwpairs section, is "read" (RLock/RUnlock pairs) or
	// "write" (Lock/Unlock pairs).
	Access string `json:"access,omitempty"`
	// Reads, in the rwmix section, is the percentage of operations that
	// are reads.
	Reads  int   `json:"reads_percent,omitempty"`
	Ops    int64 `json:"ops"`
	Rounds int   `json:"rounds"`

	// From the round with the median real time (Benchmark.bm's columns).
	UserNs int64 `json:"user_ns"`
	SysNs  int64 `json:"sys_ns"`
	RealNs int64 `json:"real_ns"`

	NsPerOp    stat `json:"ns_per_op"`
	OpsPerSec  stat `json:"ops_per_sec"`
	CPUNsPerOp stat `json:"cpu_ns_per_op"`
	Cores      stat `json:"cores"`

	// The ratios are paired, round by round (see ratioStat); nil where the
	// section has no such ratio.

	// Ratio is against the section's baseline in the same round: ns/op
	// against sync.Mutex (pairs, nested) or sync.RWMutex's pair of the
	// same access (rwpairs); ops/s against sync.Mutex (contended) or
	// sync.RWMutex (rwmix) at the same goroutine count and read share;
	// acquire/s against sync.Mutex (pool); items/s against the same queue
	// at batch 1 (batch).
	Ratio *ratioStat `json:"ratio,omitempty"`
	// CPURatio is CPU-ns/op against the same baseline as Ratio (not in
	// the batch section).
	CPURatio *ratioStat `json:"cpu_ratio,omitempty"`
	// FloorRatio (pairs and nested) is ns/op against the floor lock.
	FloorRatio *ratioStat `json:"floor_ratio,omitempty"`
	// FloorCPURatio (pairs and nested) is CPU-ns/op against the floor
	// lock: the figure the uncontended targets are read from, see
	// simpleSection.
	FloorCPURatio *ratioStat `json:"floor_cpu_ratio,omitempty"`

	Acquire *stat `json:"acquire_per_sec,omitempty"` // pool
	Release *stat `json:"release_per_sec,omitempty"`
	Remove  *stat `json:"remove_per_sec,omitempty"`

	Latency *latencyStats `json:"latency,omitempty"`

	// rounds holds the results of the counted rounds, in round order, for
	// the ratios between rows that measure computes once every section is
	// done (the targets); measure then drops them.
	rounds []bench.Result
}

// latencyStats is the Kotlin benchmark's percentile row, in nanoseconds.
type latencyStats struct {
	Min        int64 `json:"min_ns"`
	P50        int64 `json:"p50_ns"`
	P90        int64 `json:"p90_ns"`
	P95        int64 `json:"p95_ns"`
	P99        int64 `json:"p99_ns"`
	P999       int64 `json:"p99_9_ns"`
	Max        int64 `json:"max_ns"`
	Total      int64 `json:"total_ns"` // time spent acquiring, summed over goroutines
	Iterations int64 `json:"iterations"`
}

func latencyOf(h *hdrhistogram.Histogram) *latencyStats {
	return &latencyStats{
		Min:        h.Min(),
		P50:        h.ValueAtQuantile(50),
		P90:        h.ValueAtQuantile(90),
		P95:        h.ValueAtQuantile(95),
		P99:        h.ValueAtQuantile(99),
		P999:       h.ValueAtQuantile(99.9),
		Max:        h.Max(),
		Total:      int64(h.Mean() * float64(h.TotalCount())),
		Iterations: h.TotalCount(),
	}
}

// sample is one round of one cell.
type sample struct {
	res  bench.Result
	pool *bench.PoolResult
	hist *hdrhistogram.Histogram
}

// cell is one measurement: a lock (or queue) under one set of parameters.
type cell struct {
	name   string
	g      int
	batch  int
	access string
	reads  int
	setup  func() (restore func())
	run    func() (sample, error)
	// est is about how long run takes, for the plan (see
	// progress.costOf); 0 outside the planning pass.
	est time.Duration
}

// errPlanned is runCells's answer in the planning pass: the section's
// runs are counted, not made.
var errPlanned = errors.New("planned, not measured")

// runCells measures every cell in warmup+rounds passes, visiting the
// cells in turn in each pass (in visitOrder), and returns the counted
// samples per cell, in round order: out[i][k] is cell i in counted round
// k, so that out[i][k] and out[j][k] ran moments apart. what says what
// one run is, for the plan and the progress lines. In the planning pass
// it records the section in the plan and returns errPlanned.
func runCells(cfg config, p *progress, title, what string, cells []cell) ([][]sample, error) {
	passes := cfg.warmup + cfg.rounds
	if p.planning {
		var est time.Duration
		for _, c := range cells {
			est += c.est + perRun
		}
		p.plan = append(p.plan, planned{title: title, run: what, runs: len(cells) * passes, est: est * time.Duration(passes)})
		return nil, errPlanned
	}
	out := make([][]sample, len(cells))
	p.section(title, what, len(cells)*passes)
	for pass := range cfg.warmup + cfg.rounds {
		for _, i := range visitOrder(pass, len(cells)) {
			c := cells[i]
			restore := func() {}
			if c.setup != nil {
				restore = c.setup()
			}
			runtime.GC() // start each run with the same clean heap
			s, err := c.run()
			restore()
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", title, c.name, err)
			}
			if pass >= cfg.warmup {
				out[i] = append(out[i], s)
			}
			p.step()
		}
	}
	return out, nil
}

// visitOrder returns the order in which pass visits n cells: first to
// last in even passes, last to first in odd ones.
//
// In a fixed order each cell would always run right after the same one
// and at the same distance before or after its baseline, so whatever a
// run leaves behind for the next (a warm or cold cache, a scheduler still
// spinning down after a contended run, the heap runtime.GC has just
// swept), and any drift within a round, would fall on the same pairs
// every round and bias their ratios. Reversing every other pass gives
// each cell its two neighbours in turn as predecessor, and puts it as far
// after its baseline in one round as before it in the next, so a drift
// that is linear over two rounds cancels in the median. Rotating the
// start instead would keep every cell but the first behind the same
// neighbour (the circular order does not change); shuffling would spread
// the gap between a cell and its baseline from adjacent to a whole
// round, and a paired ratio is the better the closer its two runs are.
func visitOrder(pass, n int) []int {
	order := make([]int, n)
	for j := range order {
		order[j] = j
		if pass%2 == 1 {
			order[j] = n - 1 - j
		}
	}
	return order
}

// rowOf summarises a cell's samples.
func rowOf(c cell, ss []sample) *row {
	r := &row{Lock: c.name, Goroutines: c.g, Batch: c.batch, Access: c.access, Reads: c.reads, Rounds: len(ss)}
	var ns, ops, cpu, cores []float64
	for _, s := range ss {
		ns = append(ns, s.res.NsPerOp())
		ops = append(ops, s.res.OpsPerSec())
		cpu = append(cpu, s.res.CPUNsPerOp())
		cores = append(cores, s.res.Cores())
		r.rounds = append(r.rounds, s.res)
	}
	r.NsPerOp, r.OpsPerSec, r.CPUNsPerOp, r.Cores = statOf(ns), statOf(ops), statOf(cpu), statOf(cores)
	med := slices.Clone(ss)
	slices.SortStableFunc(med, func(a, b sample) int { return int(a.res.Wall - b.res.Wall) })
	m := med[(len(med)-1)/2].res
	r.Ops, r.UserNs, r.SysNs, r.RealNs = m.Ops, int64(m.User), int64(m.Sys), int64(m.Wall)
	if ss[0].pool != nil {
		var acq, rel, rem []float64
		for _, s := range ss {
			acq = append(acq, s.pool.Rate(s.pool.Acquires))
			rel = append(rel, s.pool.Rate(s.pool.Releases))
			rem = append(rem, s.pool.Rate(s.pool.Removes))
		}
		a, b, c := statOf(acq), statOf(rel), statOf(rem)
		r.Acquire, r.Release, r.Remove = &a, &b, &c
	}
	if ss[0].hist != nil {
		h := bench.NewLatencyHistogram()
		for _, s := range ss {
			h.Merge(s.hist)
		}
		r.Latency = latencyOf(h)
	}
	return r
}

// Per-round metrics that ratios are taken of.
func nsPerOp(r bench.Result) float64    { return r.NsPerOp() }
func opsPerSec(r bench.Result) float64  { return r.OpsPerSec() }
func cpuNsPerOp(r bench.Result) float64 { return r.CPUNsPerOp() }

// paired returns the paired ratio (see ratioStat) of x's metric to
// base's, over the rounds both rows were measured in.
func paired(x, base *row, metric func(bench.Result) float64) *ratioStat {
	xs, bs := make([]float64, len(x.rounds)), make([]float64, len(base.rounds))
	for k, r := range x.rounds {
		xs[k] = metric(r)
	}
	for k, r := range base.rounds {
		bs[k] = metric(r)
	}
	rs := pairedRatio(xs, bs)
	return &rs
}

// measure runs what cfg asks for.
func measure(cfg config, p *progress) (*report, error) {
	inside, outside := bench.Calibrate(cfg.inside), bench.Calibrate(cfg.outside)
	rep := &report{
		Timestamp: time.Now().UTC().Format(time.RFC3339),
		Library:   libraryVersion(),
		Env:       bench.Environment(),
		Args:      cfg.args,
		Rounds:    cfg.rounds,
		Warmup:    cfg.warmup,
		Work: workInfo{
			InsideNs: int64(cfg.inside), InsideIters: inside.Iters,
			OutsideNs: int64(cfg.outside), OutsideIters: outside.Iters,
		},
	}
	if rep.Args == nil {
		rep.Args = []string{}
	}
	if l, ok := loadAverage(); ok {
		rep.Load = append(rep.Load, l)
	}
	headline := cfg.workload == "headline" || cfg.workload == "all"
	steps := []struct {
		on  bool
		run func(config, *progress, bench.Work, bench.Work) (*section, error)
	}{
		{headline, pairsSection},
		{headline, nestedSection},
		{headline, contendedSection},
		{(headline || cfg.workload == "latency") && cfg.latency, latencySection},
		{cfg.workload == "pool" || cfg.workload == "all", poolSection},
		{cfg.workload == "batch" || cfg.workload == "all", batchSection},
		{cfg.workload == "rw" || cfg.workload == "all", rwPairsSection},
		{cfg.workload == "rw" || cfg.workload == "all", rwMixSection},
	}
	// A planning pass, unless -quiet, builds every section's cells and
	// counts them (runCells returns errPlanned) for the plan printed
	// before the first measurement.
	if !p.quiet {
		p.planning = true
		for _, s := range steps {
			if s.on {
				if _, err := s.run(cfg, p, inside, outside); !errors.Is(err, errPlanned) {
					return nil, fmt.Errorf("planning: %v", err)
				}
			}
		}
		p.planning = false
		printPlan(p.w, cfg, p.plan)
	}
	for _, s := range steps {
		if !s.on {
			continue
		}
		sec, err := s.run(cfg, p, inside, outside)
		if err != nil {
			return nil, err
		}
		rep.Sections = append(rep.Sections, sec)
	}
	rep.Targets = targets(rep)
	if l, ok := loadAverage(); ok && len(rep.Load) == 1 {
		rep.Load = append(rep.Load, l)
	}
	for _, sec := range rep.Sections {
		for _, r := range sec.Rows {
			r.rounds = nil
		}
	}
	p.finish()
	return rep, nil
}

func pairsSection(cfg config, p *progress, _, _ bench.Work) (*section, error) {
	var cells []cell
	for _, l := range cfg.locks {
		cells = append(cells, cell{name: l.Name, setup: l.Configure, est: time.Duration(cfg.pairs) * p.costOf(l), run: func() (sample, error) {
			return sample{res: bench.Pairs(l, cfg.pairs)}, nil
		}})
	}
	title := fmt.Sprintf("Uncontended: %s Lock/Unlock pairs", count(cfg.pairs))
	what := fmt.Sprintf("one lock's %s Lock/Unlock pairs by one goroutine", count(cfg.pairs))
	return simpleSection(cfg, p, kindPairs, title, what, cfg.pairs, cells)
}

func nestedSection(cfg config, p *progress, _, _ bench.Work) (*section, error) {
	var cells []cell
	for _, l := range bench.FirstEntry(cfg.locks) {
		cells = append(cells, cell{name: l.Name, setup: l.Configure, est: 2 * time.Duration(cfg.nested) * p.costOf(l), run: func() (sample, error) {
			return sample{res: bench.Nested(l, cfg.nested)}, nil
		}})
	}
	title := fmt.Sprintf("Two nested locks: %s rounds of Lock a, Lock b, Unlock b, Unlock a", count(cfg.nested))
	what := fmt.Sprintf("one lock type's %s such rounds by one goroutine", count(cfg.nested))
	return simpleSection(cfg, p, kindNested, title, what, cfg.nested, cells)
}

// simpleSection measures one-row-per-lock tables; ratio is ns/op against
// the first row (sync.Mutex), floor ratio against the floor lock, and the
// CPU ratios the same for CPU-ns/op. One goroutine runs the loop and
// nothing else in the process runs meanwhile, so its CPU time is the
// loop's time on a CPU: unlike real time, it does not grow while other
// processes on a shared machine hold the CPU, which is why the
// uncontended targets are read from the CPU ratios.
func simpleSection(cfg config, p *progress, kind, title, what string, ops int, cells []cell) (*section, error) {
	samples, err := runCells(cfg, p, title, what, cells)
	if err != nil {
		return nil, err
	}
	sec := &section{Kind: kind, Title: title, Ops: ops}
	for i, c := range cells {
		sec.Rows = append(sec.Rows, rowOf(c, samples[i]))
	}
	var floor *row
	for _, r := range sec.Rows {
		if r.Lock == bench.FloorName {
			floor = r
		}
	}
	for _, r := range sec.Rows {
		r.Ratio = paired(r, sec.Rows[0], nsPerOp)
		r.CPURatio = paired(r, sec.Rows[0], cpuNsPerOp)
		if floor != nil {
			r.FloorRatio = paired(r, floor, nsPerOp)
			r.FloorCPURatio = paired(r, floor, cpuNsPerOp)
		}
	}
	return sec, nil
}

func contendedCells(cfg config, p *progress, locks []bench.Lock, inside, outside bench.Work, latency bool) []cell {
	var cells []cell
	for _, g := range cfg.goroutines {
		for _, l := range locks {
			ld := bench.Load{Goroutines: g, Ops: cfg.ops, Inside: inside, Outside: outside, Latency: latency}
			est := time.Duration(cfg.ops) * (time.Duration(l.Depth)*p.costOf(l) + p.contendedOp(cfg, inside, outside))
			cells = append(cells, cell{name: l.Name, g: g, setup: l.Configure, est: est, run: func() (sample, error) {
				r, err := bench.Contended(l, ld)
				return sample{res: r.Result, hist: r.Latency}, err
			}})
		}
	}
	return cells
}

func contendedSection(cfg config, p *progress, inside, outside bench.Work) (*section, error) {
	title := fmt.Sprintf("Contended: %s critical sections of ~%v work, ~%v between, shared by G goroutines",
		count(cfg.ops), cfg.inside, cfg.outside)
	cells := contendedCells(cfg, p, cfg.locks, inside, outside, false)
	what := fmt.Sprintf("one lock's %s critical sections shared by one count of goroutines", count(cfg.ops))
	samples, err := runCells(cfg, p, title, what, cells)
	if err != nil {
		return nil, err
	}
	sec := &section{Kind: kindContended, Title: title, Ops: cfg.ops}
	base := map[int]*row{}
	for i, c := range cells {
		r := rowOf(c, samples[i])
		sec.Rows = append(sec.Rows, r)
		if c.name == bench.Locks()[0].Name {
			base[c.g] = r
		}
	}
	for _, r := range sec.Rows {
		if b := base[r.Goroutines]; b != nil {
			r.Ratio = paired(r, b, opsPerSec)
			r.CPURatio = paired(r, b, cpuNsPerOp)
		}
	}
	return sec, nil
}

func latencySection(cfg config, p *progress, inside, outside bench.Work) (*section, error) {
	title := fmt.Sprintf("Lock-acquire latency: %s critical sections of ~%v work shared by G goroutines, every Lock timed",
		count(cfg.ops), cfg.inside)
	cells := contendedCells(cfg, p, bench.FirstEntry(cfg.locks), inside, outside, true)
	what := fmt.Sprintf("one lock's %s critical sections shared by one count of goroutines, every Lock timed", count(cfg.ops))
	samples, err := runCells(cfg, p, title, what, cells)
	if err != nil {
		return nil, err
	}
	sec := &section{Kind: kindLatency, Title: title, Ops: cfg.ops}
	sec.ClockNs, sec.ClockStepNs = int64(bench.ClockOverhead()), int64(bench.ClockStep())
	for i, c := range cells {
		sec.Rows = append(sec.Rows, rowOf(c, samples[i]))
	}
	return sec, nil
}

func poolSection(cfg config, p *progress, _, _ bench.Work) (*section, error) {
	title := fmt.Sprintf("Connection pool (Jetty's workload): 4 goroutines acquiring, 3 releasing, 1 removing, capacity 250; %s acquisitions",
		count(cfg.ops))
	var cells []cell
	for _, l := range bench.FirstEntry(cfg.locks) {
		est := time.Duration(cfg.ops) * (p.costOf(l) + poolHandoff)
		cells = append(cells, cell{name: l.Name, setup: l.Configure, est: est, run: func() (sample, error) {
			r, err := bench.Pool(l, bench.DefaultPoolLoad(cfg.ops))
			return sample{res: r.Result, pool: &r}, err
		}})
	}
	what := fmt.Sprintf("one lock's pool serving %s acquisitions", count(cfg.ops))
	samples, err := runCells(cfg, p, title, what, cells)
	if err != nil {
		return nil, err
	}
	sec := &section{Kind: kindPool, Title: title, Ops: cfg.ops}
	for i, c := range cells {
		sec.Rows = append(sec.Rows, rowOf(c, samples[i]))
	}
	acquires := func(ss []sample) []float64 {
		out := make([]float64, len(ss))
		for k, s := range ss {
			out[k] = s.pool.Rate(s.pool.Acquires)
		}
		return out
	}
	for i, r := range sec.Rows {
		rs := pairedRatio(acquires(samples[i]), acquires(samples[0]))
		r.Ratio = &rs
		r.CPURatio = paired(r, sec.Rows[0], cpuNsPerOp)
	}
	return sec, nil
}

func batchSection(cfg config, p *progress, _, _ bench.Work) (*section, error) {
	title := fmt.Sprintf("Batch queue: 2 producers and 2 consumers moving %s items each through a queue of 1000, one at a time or in batches",
		count(cfg.items))
	load := func(b int) bench.BatchLoad {
		bl := bench.DefaultBatchLoad(b)
		bl.Items = cfg.items
		return bl
	}
	var cells []cell
	for _, l := range bench.FirstEntry(cfg.locks) {
		if l.Type != "monitor.Monitor" {
			continue
		}
		for _, b := range cfg.batches {
			cells = append(cells, cell{name: "batchqueue/" + l.Name, batch: b, setup: l.Configure, est: minBatchTime, run: func() (sample, error) {
				r, err := repeat(func() (bench.Result, error) { return bench.BatchQueue(load(b)) })
				return sample{res: r}, err
			}})
		}
	}
	for _, b := range cfg.batches {
		cells = append(cells, cell{name: "chan", batch: b, est: minBatchTime, run: func() (sample, error) {
			r, err := repeat(func() (bench.Result, error) { return bench.BatchChan(load(b)) })
			return sample{res: r}, err
		}})
	}
	what := fmt.Sprintf("one queue at one batch size, its workload repeated for at least %v", minBatchTime)
	samples, err := runCells(cfg, p, title, what, cells)
	if err != nil {
		return nil, err
	}
	sec := &section{Kind: kindBatch, Title: title, Ops: cfg.items}
	one := map[string]*row{}
	for i, c := range cells {
		r := rowOf(c, samples[i])
		sec.Rows = append(sec.Rows, r)
		if c.batch == 1 {
			one[c.name] = r
		}
	}
	for _, r := range sec.Rows {
		if b := one[r.Lock]; b != nil {
			r.Ratio = paired(r, b, opsPerSec)
		}
	}
	return sec, nil
}

// rwPairsSection measures the read-write locks' uncontended read pairs,
// then their write pairs; ratios are against sync.RWMutex's pair of the
// same access (the first row of each), as simpleSection's are against
// sync.Mutex.
func rwPairsSection(cfg config, p *progress, _, _ bench.Work) (*section, error) {
	var cells []cell
	for _, access := range []string{accessRead, accessWrite} {
		run := bench.ReadPairs
		if access == accessWrite {
			run = bench.WritePairs
		}
		for _, l := range cfg.rwLocks {
			cells = append(cells, cell{name: l.Name, access: access, setup: l.Configure, est: time.Duration(cfg.pairs) * p.costOf(l), run: func() (sample, error) {
				return sample{res: run(l, cfg.pairs)}, nil
			}})
		}
	}
	title := fmt.Sprintf("Read-write locks, uncontended: %s RLock/RUnlock pairs, and %s Lock/Unlock pairs", count(cfg.pairs), count(cfg.pairs))
	what := fmt.Sprintf("one lock's %s read or write pairs by one goroutine", count(cfg.pairs))
	samples, err := runCells(cfg, p, title, what, cells)
	if err != nil {
		return nil, err
	}
	sec := &section{Kind: kindRWPairs, Title: title, Ops: cfg.pairs}
	base := map[string]*row{}
	for i, c := range cells {
		r := rowOf(c, samples[i])
		sec.Rows = append(sec.Rows, r)
		if _, ok := base[c.access]; !ok {
			base[c.access] = r
		}
	}
	for _, r := range sec.Rows {
		b := base[r.Access]
		r.Ratio = paired(r, b, nsPerOp)
		r.CPURatio = paired(r, b, cpuNsPerOp)
	}
	return sec, nil
}

// rwMixSection measures the read-mostly mixes on the read-write locks at
// each goroutine count; ratios are against sync.RWMutex at the same read
// share and goroutine count.
func rwMixSection(cfg config, p *progress, inside, outside bench.Work) (*section, error) {
	var cells []cell
	for _, reads := range rwReadPercents {
		for _, g := range cfg.goroutines {
			for _, l := range cfg.rwLocks {
				ld := bench.RWLoad{Goroutines: g, Ops: cfg.ops, ReadPercent: reads, Inside: inside, Outside: outside}
				est := time.Duration(cfg.ops) * (time.Duration(l.Depth)*p.costOf(l) + p.contendedOp(cfg, inside, outside))
				cells = append(cells, cell{name: l.Name, g: g, reads: reads, setup: l.Configure, est: est, run: func() (sample, error) {
					r, err := bench.RWMix(l, ld)
					return sample{res: r}, err
				}})
			}
		}
	}
	title := fmt.Sprintf("Read-mostly: %s operations, 90 %% or 99 %% of them reads, critical sections of ~%v work, ~%v between, shared by G goroutines",
		count(cfg.ops), cfg.inside, cfg.outside)
	what := fmt.Sprintf("one lock's %s operations at one read share, shared by one count of goroutines", count(cfg.ops))
	samples, err := runCells(cfg, p, title, what, cells)
	if err != nil {
		return nil, err
	}
	sec := &section{Kind: kindRWMix, Title: title, Ops: cfg.ops}
	type key struct{ reads, g int }
	base := map[key]*row{}
	for i, c := range cells {
		r := rowOf(c, samples[i])
		sec.Rows = append(sec.Rows, r)
		if c.name == bench.RWLocks()[0].Name {
			base[key{c.reads, c.g}] = r
		}
	}
	for _, r := range sec.Rows {
		if b := base[key{r.Reads, r.Goroutines}]; b != nil {
			r.Ratio = paired(r, b, opsPerSec)
			r.CPURatio = paired(r, b, cpuNsPerOp)
		}
	}
	return sec, nil
}

// poolHandoff is about what a pool operation costs besides the lock, in
// the plan's estimate: the channel handoffs between the pool's
// goroutines.
const poolHandoff = time.Microsecond

// minBatchTime is how long a round of the batch workload lasts at least:
// the workload is repeated until then, since 10,000 items in batches of
// 1000 take tens of microseconds, too short to time on their own.
const minBatchTime = 25 * time.Millisecond

// repeat runs the workload until minBatchTime has passed and adds up the
// results.
func repeat(run func() (bench.Result, error)) (bench.Result, error) {
	var sum bench.Result
	for sum.Ops == 0 || sum.Wall < minBatchTime {
		r, err := run()
		if err != nil {
			return sum, err
		}
		sum.Ops += r.Ops
		sum.Wall += r.Wall
		sum.User += r.User
		sum.Sys += r.Sys
	}
	return sum, nil
}

// count formats n with thousands separators.
func count(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + count(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func durationOf(n int64) time.Duration { return time.Duration(n) }
