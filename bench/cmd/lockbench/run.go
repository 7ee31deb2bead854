package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
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
	locks      []bench.Lock
	rounds     int
	warmup     int
	latency    bool
	workload   string
	format     string
	inside     time.Duration
	outside    time.Duration
	quiet      bool
	soak       time.Duration
	args       []string
}

var (
	workloads = []string{"headline", "pool", "batch", "all"}
	formats   = []string{"text", "markdown", "json", "csv"}
)

// run is the command: it parses args, measures, and writes the results to
// stdout and progress and diagnostics to stderr. It returns the exit
// status.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	if cfg.soak > 0 {
		return soak(cfg, stdout, stderr)
	}
	rep, err := measure(cfg, newProgress(stderr, cfg.quiet))
	if err != nil {
		fmt.Fprintf(stderr, "lockbench: %v\n", err)
		return exitError
	}
	if err := write(stdout, cfg.format, rep); err != nil {
		fmt.Fprintf(stderr, "lockbench: writing results: %v\n", err)
		return exitError
	}
	return exitOK
}

// parseArgs parses and checks args. Errors have been reported to stderr
// when it returns; flag.ErrHelp means -h was asked for.
func parseArgs(args []string, stderr io.Writer) (config, error) {
	cfg := config{
		goroutines: []int{1, 2, 4, 8},
		batches:    []int{1, 10, 100, 1000},
		workload:   "headline",
		format:     "text",
		args:       args,
	}
	fs := flag.NewFlagSet("lockbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: lockbench [flags]\n\n"+
			"Measures locksmith's locks beside sync.Mutex, go-deadlock, spin locks and a channel lock.\n"+
			"Results go to stdout, progress to stderr. Flags:\n\n")
		fs.PrintDefaults()
		fmt.Fprintf(fs.Output(), "\nLocks: %s\n", strings.Join(bench.Names(bench.Locks()), ", "))
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
	fs.IntVar(&cfg.rounds, "rounds", 3, "`N` counted rounds per measurement; tables show the median, min and max")
	fs.IntVar(&cfg.warmup, "warmup", 1, "`N` rounds run first and not counted")
	fs.BoolVar(&cfg.latency, "latency", false, "add a percentile table of lock-acquire latency (headline workload)")
	fs.Var(choice{&cfg.workload, workloads}, "workload", "`workload` to run: "+strings.Join(workloads, ", ")+
		"; pool is Jetty's connection-pool workload, batch the batch-queue workload")
	fs.Var(choice{&cfg.format, formats}, "format", "output `format`: "+strings.Join(formats, ", "))
	fs.DurationVar(&cfg.inside, "work", bench.DefaultInside, "work inside each contended critical section")
	fs.DurationVar(&cfg.outside, "outside", bench.DefaultOutside, "work between a goroutine's critical sections")
	fs.BoolVar(&cfg.quiet, "quiet", false, "no progress on stderr")
	fs.DurationVar(&cfg.soak, "soak", 0, "instead of measuring, run the stress mix of every primitive for `duration`, a third in each\n"+
		"detect mode, and print operations per primitive and anomalies (exit status 1 if any)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	fail := func(format string, a ...any) (config, error) {
		err := fmt.Errorf(format, a...)
		fmt.Fprintf(stderr, "lockbench: %v\nRun 'lockbench -h' for usage.\n", err)
		return cfg, err
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
	all := bench.Locks()
	cfg.locks = all
	if locks != "" {
		sel, err := bench.Select(all, strings.Split(locks, ","))
		if err != nil {
			return fail("-locks: %v", err)
		}
		if sel[0].Name != all[0].Name {
			sel = append([]bench.Lock{all[0]}, sel...) // the baseline
		}
		cfg.locks = sel
	}
	if cfg.latency && (cfg.workload == "pool" || cfg.workload == "batch") {
		return fail("-latency measures the headline's contended locks; it does not apply to -workload %s", cfg.workload)
	}
	return cfg, nil
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

// progress reports on stderr what is being measured. On a terminal it
// keeps one updating line; otherwise it writes a line per table.
type progress struct {
	w       io.Writer
	quiet   bool
	tty     bool
	start   time.Time
	title   string
	n, done int
	last    time.Time
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

// section starts a table of n measurements.
func (p *progress) section(title string, n int) {
	p.title, p.n, p.done = title, n, 0
	if p.quiet {
		return
	}
	if p.tty {
		p.update()
		return
	}
	fmt.Fprintf(p.w, "lockbench: %s (%d runs)\n", title, n)
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

func (p *progress) update() {
	fmt.Fprintf(p.w, "\r\033[Klockbench: %s: %d/%d", p.title, p.done, p.n)
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
