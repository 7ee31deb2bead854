package main

import (
	"fmt"
	"runtime"
	"slices"
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
	n := len(s)
	if n == 0 {
		return stat{}
	}
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return stat{Median: med, Min: s[0], Max: s[n-1]}
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

	NsPerOp    stat    `json:"ns_per_op"`
	OpsPerSec  stat    `json:"ops_per_sec"`
	CPUNsPerOp stat    `json:"cpu_ns_per_op"`
	Cores      stat    `json:"cores"`
	Ratio      float64 `json:"ratio,omitempty"`       // see section writers: vs sync.Mutex (sync.RWMutex for rw sections), or vs batch 1
	FloorRatio float64 `json:"floor_ratio,omitempty"` // pairs and nested: ns/op vs the floor lock
	CPURatio   float64 `json:"cpu_ratio,omitempty"`   // CPU-ns/op vs sync.Mutex (sync.RWMutex for rw sections)
	// FloorCPURatio (pairs and nested) is CPU-ns/op against the floor
	// lock: the figure the uncontended targets are read from, see
	// simpleSection.
	FloorCPURatio float64 `json:"floor_cpu_ratio,omitempty"`

	Acquire *stat `json:"acquire_per_sec,omitempty"` // pool
	Release *stat `json:"release_per_sec,omitempty"`
	Remove  *stat `json:"remove_per_sec,omitempty"`

	Latency *latencyStats `json:"latency,omitempty"`
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
}

// runCells measures every cell in warmup+rounds passes, visiting the
// cells in turn in each pass, and returns the counted samples per cell.
func runCells(cfg config, p *progress, title string, cells []cell) ([][]sample, error) {
	out := make([][]sample, len(cells))
	p.section(title, len(cells)*(cfg.warmup+cfg.rounds))
	for pass := range cfg.warmup + cfg.rounds {
		for i, c := range cells {
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

// rowOf summarises a cell's samples.
func rowOf(c cell, ss []sample) *row {
	r := &row{Lock: c.name, Goroutines: c.g, Batch: c.batch, Access: c.access, Reads: c.reads, Rounds: len(ss)}
	var ns, ops, cpu, cores []float64
	for _, s := range ss {
		ns = append(ns, s.res.NsPerOp())
		ops = append(ops, s.res.OpsPerSec())
		cpu = append(cpu, s.res.CPUNsPerOp())
		cores = append(cores, s.res.Cores())
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

func ratio(x, base float64) float64 {
	if base == 0 {
		return 0
	}
	return x / base
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
	p.finish()
	return rep, nil
}

func pairsSection(cfg config, p *progress, _, _ bench.Work) (*section, error) {
	var cells []cell
	for _, l := range cfg.locks {
		cells = append(cells, cell{name: l.Name, setup: l.Configure, run: func() (sample, error) {
			return sample{res: bench.Pairs(l, cfg.pairs)}, nil
		}})
	}
	title := fmt.Sprintf("Uncontended: %s Lock/Unlock pairs", count(cfg.pairs))
	return simpleSection(cfg, p, kindPairs, title, cfg.pairs, cells)
}

func nestedSection(cfg config, p *progress, _, _ bench.Work) (*section, error) {
	var cells []cell
	for _, l := range bench.FirstEntry(cfg.locks) {
		cells = append(cells, cell{name: l.Name, setup: l.Configure, run: func() (sample, error) {
			return sample{res: bench.Nested(l, cfg.nested)}, nil
		}})
	}
	title := fmt.Sprintf("Two nested locks: %s rounds of Lock a, Lock b, Unlock b, Unlock a", count(cfg.nested))
	return simpleSection(cfg, p, kindNested, title, cfg.nested, cells)
}

// simpleSection measures one-row-per-lock tables; ratio is ns/op against
// the first row (sync.Mutex), floor ratio against the floor lock, and the
// CPU ratios the same for CPU-ns/op. One goroutine runs the loop and
// nothing else in the process runs meanwhile, so its CPU time is the
// loop's time on a CPU: unlike real time, it does not grow while other
// processes on a shared machine hold the CPU, which is why the
// uncontended targets are read from the CPU ratios.
func simpleSection(cfg config, p *progress, kind, title string, ops int, cells []cell) (*section, error) {
	samples, err := runCells(cfg, p, title, cells)
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
		r.Ratio = ratio(r.NsPerOp.Median, sec.Rows[0].NsPerOp.Median)
		r.CPURatio = ratio(r.CPUNsPerOp.Median, sec.Rows[0].CPUNsPerOp.Median)
		if floor != nil {
			r.FloorRatio = ratio(r.NsPerOp.Median, floor.NsPerOp.Median)
			r.FloorCPURatio = ratio(r.CPUNsPerOp.Median, floor.CPUNsPerOp.Median)
		}
	}
	return sec, nil
}

func contendedCells(cfg config, locks []bench.Lock, inside, outside bench.Work, latency bool) []cell {
	var cells []cell
	for _, g := range cfg.goroutines {
		for _, l := range locks {
			ld := bench.Load{Goroutines: g, Ops: cfg.ops, Inside: inside, Outside: outside, Latency: latency}
			cells = append(cells, cell{name: l.Name, g: g, setup: l.Configure, run: func() (sample, error) {
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
	cells := contendedCells(cfg, cfg.locks, inside, outside, false)
	samples, err := runCells(cfg, p, title, cells)
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
			r.Ratio = ratio(r.OpsPerSec.Median, b.OpsPerSec.Median)
			r.CPURatio = ratio(r.CPUNsPerOp.Median, b.CPUNsPerOp.Median)
		}
	}
	return sec, nil
}

func latencySection(cfg config, p *progress, inside, outside bench.Work) (*section, error) {
	title := fmt.Sprintf("Lock-acquire latency: %s critical sections of ~%v work shared by G goroutines, every Lock timed",
		count(cfg.ops), cfg.inside)
	cells := contendedCells(cfg, bench.FirstEntry(cfg.locks), inside, outside, true)
	samples, err := runCells(cfg, p, title, cells)
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
		cells = append(cells, cell{name: l.Name, setup: l.Configure, run: func() (sample, error) {
			r, err := bench.Pool(l, bench.DefaultPoolLoad(cfg.ops))
			return sample{res: r.Result, pool: &r}, err
		}})
	}
	samples, err := runCells(cfg, p, title, cells)
	if err != nil {
		return nil, err
	}
	sec := &section{Kind: kindPool, Title: title, Ops: cfg.ops}
	for i, c := range cells {
		sec.Rows = append(sec.Rows, rowOf(c, samples[i]))
	}
	for _, r := range sec.Rows {
		r.Ratio = ratio(r.Acquire.Median, sec.Rows[0].Acquire.Median)
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
			cells = append(cells, cell{name: "batchqueue/" + l.Name, batch: b, setup: l.Configure, run: func() (sample, error) {
				r, err := repeat(func() (bench.Result, error) { return bench.BatchQueue(load(b)) })
				return sample{res: r}, err
			}})
		}
	}
	for _, b := range cfg.batches {
		cells = append(cells, cell{name: "chan", batch: b, run: func() (sample, error) {
			r, err := repeat(func() (bench.Result, error) { return bench.BatchChan(load(b)) })
			return sample{res: r}, err
		}})
	}
	samples, err := runCells(cfg, p, title, cells)
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
			r.Ratio = ratio(r.OpsPerSec.Median, b.OpsPerSec.Median)
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
			cells = append(cells, cell{name: l.Name, access: access, setup: l.Configure, run: func() (sample, error) {
				return sample{res: run(l, cfg.pairs)}, nil
			}})
		}
	}
	title := fmt.Sprintf("Read-write locks, uncontended: %s RLock/RUnlock pairs, and %s Lock/Unlock pairs", count(cfg.pairs), count(cfg.pairs))
	samples, err := runCells(cfg, p, title, cells)
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
		r.Ratio = ratio(r.NsPerOp.Median, b.NsPerOp.Median)
		r.CPURatio = ratio(r.CPUNsPerOp.Median, b.CPUNsPerOp.Median)
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
				cells = append(cells, cell{name: l.Name, g: g, reads: reads, setup: l.Configure, run: func() (sample, error) {
					r, err := bench.RWMix(l, ld)
					return sample{res: r}, err
				}})
			}
		}
	}
	title := fmt.Sprintf("Read-mostly: %s operations, 90 %% or 99 %% of them reads, critical sections of ~%v work, ~%v between, shared by G goroutines",
		count(cfg.ops), cfg.inside, cfg.outside)
	samples, err := runCells(cfg, p, title, cells)
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
			r.Ratio = ratio(r.OpsPerSec.Median, b.OpsPerSec.Median)
			r.CPURatio = ratio(r.CPUNsPerOp.Median, b.CPUNsPerOp.Median)
		}
	}
	return sec, nil
}

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
