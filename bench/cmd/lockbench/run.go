package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locksmith-go/locksmith/bench"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1 // a measurement or output failed, or a soak found anomalies
	exitUsage = 2 // bad flags
)

// config is what the flags ask for.
type config struct {
	pairs      int
	nested     int
	ops        int
	items      int
	goroutines []int
	batches    []int
	locks      []bench.Lock // exclusive locks (bench.Locks)
	rwLocks    []bench.Lock // read-write locks (bench.RWLocks)
	rounds     int
	warmup     int
	latency    bool
	workload   string
	format     string
	inside     time.Duration
	outside    time.Duration
	quiet      bool
	soak       time.Duration
	from       string // a JSON report to write in format instead of measuring
	compare    string // a JSON report whose IQRs this run's medians are checked against
	args       []string
}

var (
	workloads = []string{"headline", "latency", "pool", "batch", "rw", "all"}
	formats   = []string{"text", "markdown", "json", "csv"}
)

// defaultRounds is -rounds's default; see parseArgs.
const defaultRounds = 7

// errHelp is parseArgs's answer to -h: the full usage has been printed.
var errHelp = flag.ErrHelp

// shortUsage is the one line printed before a flag error.
const shortUsage = "usage: lockbench [flags]; 'lockbench -h' lists the flags"

// run is the command: it parses args, measures, and writes the results to
// stdout and progress and diagnostics to stderr. It returns the exit
// status.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	if errors.Is(err, errHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	if cfg.soak > 0 {
		return soak(cfg, stdout, stderr)
	}
	var rep *report
	if cfg.from != "" {
		rep, err = readReport(cfg.from)
	} else {
		rep, err = measure(cfg, newProgress(stderr, cfg.quiet))
	}
	if err != nil {
		fmt.Fprintf(stderr, "lockbench: %v\n", err)
		return exitError
	}
	if err := write(stdout, cfg.format, rep); err != nil {
		fmt.Fprintf(stderr, "lockbench: writing results: %v\n", err)
		return exitError
	}
	if cfg.compare != "" {
		ref, err := readReport(cfg.compare)
		if err != nil {
			fmt.Fprintf(stderr, "lockbench: %v\n", err)
			return exitError
		}
		compareReports(stderr, cfg.compare, ref, rep)
	}
	return exitOK
}

// parseArgs parses and checks args. Errors have been reported to stderr
// when it returns: the short usage line, then the error, last, where a
// terminal leaves it in view. errHelp means -h was asked for and the full
// usage printed.
func parseArgs(args []string, stderr io.Writer) (config, error) {
	cfg := config{
		goroutines: []int{1, 2, 4, 8},
		batches:    []int{1, 10, 100, 1000},
		workload:   "headline",
		format:     "text",
		args:       args,
	}
	fs := flag.NewFlagSet("lockbench", flag.ContinueOnError)
	// The flag package prints an error and then the whole usage; lockbench
	// prints the usage only for -h, and a bad flag's error after one line.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	usage := func() {
		fmt.Fprintf(stderr, "usage: lockbench [flags]\n\n"+
			"Measures locksmith's locks beside sync.Mutex, the floor lock (%s: owner word plus goid.Get,\n"+
			"the least owner tracking costs), go-deadlock, spin locks and a channel lock.\n"+
			"Results go to stdout, progress to stderr. Flags:\n\n", bench.FloorName)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		fmt.Fprintf(stderr, "\nLocks: %s\n", strings.Join(bench.Names(bench.Locks()), ", "))
		fmt.Fprintf(stderr, "\nRead-write locks (-workload rw): %s\n", strings.Join(bench.Names(bench.RWLocks()), ", "))
		fmt.Fprintf(stderr, "\nA .depthN lock is a monitor.Monitor (or monitor.RWMonitor) held N-1 times before each measured\n"+
			"Lock (or RLock): in the uncontended tables a re-entry pair at depth N, in the contended ones a\n"+
			"critical section that takes the monitor and re-enters it N-1 times.\n")
	}
	var locks string
	fs.IntVar(&cfg.pairs, "pairs", 1000000, "`N` uncontended Lock/Unlock pairs per round")
	fs.IntVar(&cfg.nested, "nested", 100000, "`N` rounds of two nested locks per round (fewer than -pairs: go-deadlock takes microseconds a round)")
	fs.IntVar(&cfg.ops, "ops", 100000, "`N` critical sections per contended round, split between the goroutines; acquisitions per pool round")
	fs.IntVar(&cfg.items, "items", 10000, "`N` items each producer puts in the batch workload")
	fs.Var(intList{&cfg.goroutines}, "goroutines", "comma-separated goroutine `counts` for the contended and latency tables")
	fs.Var(intList{&cfg.batches}, "batches", "comma-separated batch `sizes` for -workload batch (1 is one item at a time)")
	fs.StringVar(&locks, "locks", "", "comma-separated lock names or `patterns` (path.Match; a name before a slash selects all its modes,\n"+
		"e.g. mutex.Mutex,*/detect=off); default all. sync.Mutex is always included as the baseline")
	// The default, 7, was chosen with -compare against the published
	// 21-round run: 7-round runs put most of their medians inside its
	// IQRs (BENCHMARKS.md's reading notes say how to check), where
	// 3-round runs missed most of the nested table's.
	fs.IntVar(&cfg.rounds, "rounds", defaultRounds, "`N` counted rounds per measurement; tables show the median, min and max, and ratios the median of the per-round ratios")
	fs.IntVar(&cfg.warmup, "warmup", 1, "`N` rounds run first and not counted")
	fs.BoolVar(&cfg.latency, "latency", false, "measure the percentile table of lock-acquire latency: alone, that table only\n"+
		"(-workload latency); with -workload headline or all, added to it")
	fs.Var(choice{&cfg.workload, workloads}, "workload", "`workload` to run: "+strings.Join(workloads, ", ")+
		"; headline is the uncontended, nested and contended tables, latency the\n"+
		"lock-acquire percentiles, pool Jetty's connection-pool workload, batch the batch-queue workload,\n"+
		"rw the read-write locks' read and write pairs and read-mostly mixes (90 % and 99 % reads)")
	fs.Var(choice{&cfg.format, formats}, "format", "output `format`: "+strings.Join(formats, ", "))
	fs.DurationVar(&cfg.inside, "work", bench.DefaultInside, "work inside each contended critical section")
	fs.DurationVar(&cfg.outside, "outside", bench.DefaultOutside, "work between a goroutine's critical sections")
	fs.BoolVar(&cfg.quiet, "quiet", false, "no plan and no progress on stderr")
	fs.StringVar(&cfg.compare, "compare", "", "after the results, say on stderr how many of this run's ratio medians fall inside the IQR\n"+
		"of the same ratios in `FILE.json`, e.g. docs/benchmarks.json, the published run")
	fs.StringVar(&cfg.from, "from", "", "measure nothing: read the report of an earlier run from `FILE.json` (lockbench -format json)\n"+
		"and write it in -format; BENCHMARKS.md is rendered so from docs/benchmarks.json, which lockplot draws the charts from")
	fs.DurationVar(&cfg.soak, "soak", 0, "instead of measuring, run the stress mix of every primitive for `duration`, a seventh in each\n"+
		"detect mode, one switching modes while locks are held, two with locks shared across testing/synctest bubbles\n"+
		"(Order mode, and switching) and one with readers stranded in deadlocked bubbles (go1.25 or later), and print operations per primitive and anomalies (exit status 1 if any)")
	fail := func(format string, a ...any) (config, error) {
		err := fmt.Errorf(format, a...)
		fmt.Fprintf(stderr, "%s\nlockbench: %v\n", shortUsage, err)
		return cfg, err
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage()
			return cfg, errHelp
		}
		return fail("%v", err)
	}
	workloadSet := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "workload" {
			workloadSet = true
		}
	})
	if cfg.latency && !workloadSet {
		cfg.workload = "latency"
	}
	if cfg.workload == "latency" {
		cfg.latency = true
	}
	if fs.NArg() > 0 {
		return fail("unexpected argument %q: lockbench takes only flags", fs.Arg(0))
	}
	for _, c := range []struct {
		name string
		v    int
		min  int
	}{{"pairs", cfg.pairs, 1}, {"nested", cfg.nested, 1}, {"ops", cfg.ops, 1}, {"items", cfg.items, 1}, {"rounds", cfg.rounds, 1}, {"warmup", cfg.warmup, 0}} {
		if c.v < c.min {
			return fail("-%s must be at least %d, not %d", c.name, c.min, c.v)
		}
	}
	if cfg.inside < 0 || cfg.outside < 0 {
		return fail("-work and -outside must not be negative")
	}
	if cfg.soak < 0 {
		return fail("-soak must not be negative")
	}
	all, rwAll := bench.Locks(), bench.RWLocks()
	cfg.locks, cfg.rwLocks = all, rwAll
	if locks != "" {
		// One selection over both catalogues, so that a pattern has to
		// match a lock in either; "sync.RWMutex" names a row in each.
		sel, err := bench.Select(append(slices.Clone(all), rwAll...), strings.Split(locks, ","))
		if err != nil {
			return fail("-locks: %v", err)
		}
		cfg.locks, cfg.rwLocks = withBaselines(all, sel, 2), withBaselines(rwAll, sel, 1)
	}
	if cfg.latency && (cfg.workload == "pool" || cfg.workload == "batch" || cfg.workload == "rw") {
		return fail("-latency measures the headline's contended locks; it does not apply to -workload %s", cfg.workload)
	}
	return cfg, nil
}

// readReport reads a report that lockbench -format json wrote.
func readReport(name string) (*report, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("-from %s: not a lockbench JSON report: %v", name, err)
	}
	if len(rep.Sections) == 0 {
		return nil, fmt.Errorf("-from %s: the report has no sections", name)
	}
	return &rep, nil
}

// withBaselines returns the locks of all that are in sel or are one of the
// baselines every ratio is taken against, the first n of all (sync.Mutex
// and the floor lock for bench.Locks, sync.RWMutex for bench.RWLocks), in
// all's order.
func withBaselines(all, sel []bench.Lock, n int) []bench.Lock {
	var out []bench.Lock
	for i, l := range all {
		if i < n || slices.ContainsFunc(sel, func(s bench.Lock) bool { return s.Name == l.Name && s.RW() == l.RW() }) {
			out = append(out, l)
		}
	}
	return out
}

// intList is a flag.Value for a comma-separated list of positive ints.
type intList struct{ p *[]int }

func (l intList) String() string {
	if l.p == nil {
		return ""
	}
	s := make([]string, len(*l.p))
	for i, n := range *l.p {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func (l intList) Set(v string) error {
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	*l.p = out
	return nil
}

// choice is a flag.Value that accepts one of a fixed set of strings.
type choice struct {
	p    *string
	opts []string
}

func (c choice) String() string {
	if c.p == nil {
		return ""
	}
	return *c.p
}

func (c choice) Set(v string) error {
	for _, o := range c.opts {
		if v == o {
			*c.p = v
			return nil
		}
	}
	return fmt.Errorf("must be one of %s", strings.Join(c.opts, ", "))
}

// progress reports on stderr what is being measured: the plan first
// (printPlan), then a line per section, which on a terminal keeps
// updating with the runs done.
type progress struct {
	w       io.Writer
	quiet   bool
	tty     bool
	start   time.Time
	title   string
	n, done int
	last    time.Time

	// planning is set during measure's planning pass, in which runCells
	// appends each section to plan instead of measuring it, and costOf
	// probes each lock once, into costs.
	planning  bool
	plan      []planned
	costs     map[string]time.Duration
	contended time.Duration // see contendedOp
	measuring time.Time     // when the first section started
	index     int           // sections started
}

func newProgress(w io.Writer, quiet bool) *progress {
	p := &progress{w: w, quiet: quiet, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// section starts a table of n runs, each of which is what.
func (p *progress) section(title, what string, n int) {
	p.title, p.n, p.done = title, n, 0
	p.index++
	if p.index == 1 {
		p.measuring = time.Now()
	}
	if p.quiet {
		return
	}
	if p.tty {
		p.update()
		return
	}
	head := fmt.Sprintf("lockbench: section %d", p.index)
	if len(p.plan) > 0 {
		head += fmt.Sprintf(" of %d", len(p.plan))
	}
	fmt.Fprintln(p.w, wrap(fmt.Sprintf("%s, %s: %d runs, each %s (%s so far%s)", head, title, n, what,
		time.Since(p.start).Round(time.Second), p.left()), wrapWidth(), "  "))
}

// left estimates the time left from the plan, scaled by how much longer
// (or shorter) than planned the runs done so far took: on a busy machine
// the plan's probe guesses low, and this corrects it as the run goes on.
func (p *progress) left() string {
	if p.index < 1 || p.index > len(p.plan) || p.n == 0 {
		return ""
	}
	var done, rest time.Duration
	for i, s := range p.plan {
		switch {
		case i < p.index-1:
			done += s.est
		case i == p.index-1:
			part := time.Duration(float64(s.est) * float64(p.done) / float64(p.n))
			done, rest = done+part, rest+s.est-part
		default:
			rest += s.est
		}
	}
	if done <= 0 {
		return ""
	}
	elapsed := time.Since(p.measuring)
	return ", about " + about(time.Duration(float64(rest)*float64(elapsed)/float64(done))) + " left"
}

// step records one measurement done, naming the next.
func (p *progress) step() {
	p.done++
	if p.quiet || !p.tty {
		return
	}
	if now := time.Now(); now.Sub(p.last) >= 100*time.Millisecond || p.done == p.n {
		p.last = now
		p.update()
	}
}

// update rewrites the terminal's progress line, cut to its width.
func (p *progress) update() {
	of := ""
	if len(p.plan) > 0 {
		of = fmt.Sprintf(" of %d", len(p.plan))
	}
	line := fmt.Sprintf("lockbench: section %d%s, %d/%d runs, %s so far%s: %s", p.index, of, p.done, p.n,
		time.Since(p.start).Round(time.Second), p.left(), p.title)
	if r := []rune(line); len(r) > wrapWidth()-1 {
		line = string(r[:wrapWidth()-2]) + "…"
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
}

func (p *progress) finish() {
	if p.quiet {
		return
	}
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "lockbench: done in %.1fs\n", time.Since(p.start).Seconds())
}
