package catalog

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A config is one column of the table: the environment a run gets.
type config struct {
	name    string
	detect  string // LOCKSMITH_DETECT, "" for unset
	timeout string // LOCKSMITH_WAIT_TIMEOUT, "" for unset
}

// configs are the table's columns: the default test configuration and
// each mode, with the default wait timeout and with a 2 s one.
var configs = []config{
	{"default", "", ""},
	{"cycles", "cycles", ""},
	{"order", "order", ""},
	{"off", "off", ""},
	{"default, 2s", "", "2s"},
	{"cycles, 2s", "cycles", "2s"},
	{"order, 2s", "order", "2s"},
}

// deadline is how long a run may take: past the default 30 s wait
// timeout, so that a report it makes is seen.
func (c config) deadline() time.Duration {
	if c.timeout == "" && c.detect != "off" {
		return 40 * time.Second
	}
	return 12 * time.Second
}

// Outcomes of a run. The reports are those the library prints; misuse is
// a lock's own panic (recursive locking, a read-to-write upgrade).
const (
	deadlock    = "deadlock"
	lockOrder   = "lock order"
	waitTimeout = "wait timeout"
	condWait    = "cond wait"
	stuck       = "stuck waiter"
	misuse      = "misuse"
	goRuntime   = "go runtime deadlock"
	hung        = "hung"
	silent      = "silent"
	failed      = "failed"
)

// markers map a line of output to the report it starts, in the order
// they are tried.
var markers = []struct{ text, kind string }{
	{"Found one locksmith deadlock", deadlock},
	{"detect: deadlock", deadlock},
	{"possible circular locking dependency", lockOrder},
	{"detect: lock order inversion", lockOrder},
	{"goroutine blocked on a lock for", waitTimeout},
	{"waits on a Cond, unsignalled for", condWait},
	{"is stuck waiting for a lock", stuck},
	{"is stuck waiting on a Cond", stuck},
	{"contract panic in goroutine", misuse},
	{"mutex: deadlock; ", misuse},
	{"monitor: deadlock; ", misuse},
	{"all goroutines are asleep - deadlock!", goRuntime},
}

// reported says whether a run's kind is a report of the library's (the
// Go runtime's own deadlock check does not count).
func reported(kind string) bool {
	return kind != "" && kind != goRuntime && kind != hung && kind != silent && kind != failed
}

// classify names the first report in out.
func classify(out []byte) string {
	first, kind := -1, ""
	for _, m := range markers {
		if i := bytes.Index(out, []byte(m.text)); i >= 0 && (first < 0 || i < first) {
			first, kind = i, m.kind
		}
	}
	return kind
}

// reportWatcher collects a run's output and stops the run at its first
// report when stop is set.
type reportWatcher struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	kind string
	stop func()
}

func (w *reportWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.kind == "" {
		if w.kind = classify(w.buf.Bytes()); w.kind != "" && w.stop != nil {
			w.stop()
		}
	}
	return len(p), nil
}

// result is one run's outcome and output.
type result struct {
	kind string
	out  string
}

// kit is the compiled shapes binary.
type kit struct {
	bin   string
	tests []string
}

func build(t *testing.T) *kit {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	// Read the shapes' sources, so that go test's cache, which tracks the
	// files a test opens, is not served the result of other sources.
	srcs, err := filepath.Glob(filepath.Join("testdata", "shapes", "*.go"))
	if err != nil || len(srcs) == 0 {
		t.Fatalf("testdata/shapes: %v, %d files", err, len(srcs))
	}
	for _, f := range srcs {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(t.TempDir(), "shapes.test")
	cmd := exec.Command(gobin, "test", "-c", "-o", bin, "./testdata/shapes")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test -c ./testdata/shapes: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-test.list", "^Test(Bug|Fixed)").Output()
	if err != nil {
		t.Fatalf("%s -test.list: %v", bin, err)
	}
	k := &kit{bin: bin, tests: strings.Fields(string(out))}
	sort.Strings(k.tests)
	return k
}

// shapes returns the shape names, each with a TestBug and a TestFixed.
func (k *kit) shapes(t *testing.T) []string {
	t.Helper()
	have := map[string]bool{}
	for _, n := range k.tests {
		have[n] = true
	}
	var names []string
	for _, n := range k.tests {
		if s, ok := strings.CutPrefix(n, "TestBug"); ok {
			if !have["TestFixed"+s] {
				t.Errorf("%s has no fixed twin TestFixed%s", n, s)
			}
			names = append(names, s)
		}
	}
	for _, n := range k.tests {
		if s, ok := strings.CutPrefix(n, "TestFixed"); ok && !have["TestBug"+s] {
			t.Errorf("%s has no TestBug%s", n, s)
		}
	}
	return names
}

// run runs one test in its own process under c, with the one-line helper
// when verify is set. A bug's run stops at its first report.
func (k *kit) run(test string, c config, verify, stopAtReport bool) result {
	ctx, cancel := context.WithTimeout(context.Background(), c.deadline())
	defer cancel()
	cmd := exec.CommandContext(ctx, k.bin, "-test.run", "^"+test+"$", "-test.v")
	cmd.WaitDelay = time.Second
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LOCKSMITH_") && !strings.HasPrefix(kv, "CATALOG_") {
			env = append(env, kv)
		}
	}
	if c.detect != "" {
		env = append(env, "LOCKSMITH_DETECT="+c.detect)
	}
	if c.timeout != "" {
		env = append(env, "LOCKSMITH_WAIT_TIMEOUT="+c.timeout)
	}
	if verify {
		env = append(env, "CATALOG_VERIFY=1")
	}
	cmd.Env = env
	stopped := make(chan struct{})
	var once sync.Once
	w := &reportWatcher{}
	if stopAtReport {
		w.stop = func() { once.Do(func() { close(stopped); cancel() }) }
	}
	cmd.Stdout, cmd.Stderr = w, w
	err := cmd.Run()
	w.mu.Lock()
	defer w.mu.Unlock()
	r := result{kind: w.kind, out: w.buf.String()}
	switch {
	case r.kind != "":
	case ctx.Err() == context.DeadlineExceeded:
		r.kind = hung
	case err == nil:
		r.kind = silent
	default:
		r.kind = failed
	}
	return r
}

// job is one run to make.
type job struct {
	test   string
	c      config
	verify bool
}

// runAll makes every job, at most par at a time (a hung run costs no CPU).
func (k *kit) runAll(jobs []job, par int) map[job][]result {
	var mu sync.Mutex
	res := map[job][]result{}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func(j job) {
			defer wg.Done()
			defer func() { <-sem }()
			r := k.run(j.test, j.c, j.verify, strings.HasPrefix(j.test, "TestBug"))
			mu.Lock()
			res[j] = append(res[j], r)
			mu.Unlock()
		}(j)
	}
	wg.Wait()
	return res
}

// expect is what go test checks for a shape in the default
// configuration with a 2 s wait timeout: whether a plain run and a run
// with detect.VerifyNone report it. A shape absent here is one the
// library does not detect there on every run yet, and its outcome is
// logged, not checked. The *Leak shapes leave goroutines behind when the
// test returns, and only VerifyNone's end-of-test check sees them.
// orderOnly are expected as well in Order mode, the default of a test
// binary built without -race (as the shapes' binary is).
var expect = map[string]struct{ plain, verify bool }{
	"ABBA":                  {true, true},
	"ABBAString":            {true, true},
	"ThreeCycle":            {true, true},
	"MonitorABBA":           {true, true},
	"RWCycle":               {true, true},
	"DoubleLockCallChain":   {true, true},
	"DoubleLockOnce":        {true, true},
	"MissingUnlock":         {true, true},
	"RecursiveRLock":        {true, true},
	"Upgrade":               {true, true},
	"GoroutineReturnsHeld":  {true, true},
	"TimerReturnsHeld":      {true, true},
	"ReaderReturnsHeld":     {true, true},
	"HeldSendHang":          {true, true},
	"HeldReceiveHang":       {true, true},
	"HeldSelectHang":        {true, true},
	"HeldWaitGroupHang":     {true, true},
	"HeldOnceHang":          {true, true},
	"NestedCondWaitHang":    {true, true},
	"RLockCondWaitHang":     {true, true},
	"MonitorNestedWaitHang": {true, true},
	"CondNoSignalHang":      {true, true},
	"DoubleLockString":      {true, true},
	"HeldSendLeak":          {false, true},
	"HeldReceiveLeak":       {false, true},
	"HeldSelectLeak":        {false, true},
	"HeldWaitGroupLeak":     {false, true},
	"HeldOnceLeak":          {false, true},
	"NestedCondWaitLeak":    {false, true},
	"RLockCondWaitLeak":     {false, true},
	"CondNoSignalLeak":      {false, true},
}

// orderOnly are the shapes that only Order mode finds: inversions in runs
// that never interleave.
var orderOnly = map[string]struct{ plain, verify bool }{
	"ABBASequential":       {true, true},
	"ThreeCycleSequential": {true, true},
}

// TestShapes runs each shape and each fixed twin once, without and with
// detect.VerifyNone, in the default configuration with a 2 s wait
// timeout: every fixed twin is silent, and every shape in expect is
// found as expect says. With LOCKSMITH_DETECT set, the runs get that mode
// instead (the driver passes no other LOCKSMITH_ variable on): the twins
// must still be silent, and in Cycles and Order modes the shapes in
// expect found (Off mode reports nothing, so its bugs are only logged).
func TestShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a test binary per shape")
	}
	k := build(t)
	c := config{"default, 2s", "", "2s"}
	if m := os.Getenv("LOCKSMITH_DETECT"); m != "" {
		c = config{strings.ToLower(m) + ", 2s", m, "2s"}
	}
	off := strings.EqualFold(c.detect, "off")
	var jobs []job
	for _, n := range k.tests {
		jobs = append(jobs, job{n, c, false}, job{n, c, true})
	}
	res := k.runAll(jobs, 32)
	for _, s := range k.shapes(t) {
		for _, verify := range []bool{false, true} {
			bug := res[job{"TestBug" + s, c, verify}][0]
			fixed := res[job{"TestFixed" + s, c, verify}][0]
			if fixed.kind != silent {
				t.Errorf("TestFixed%s (VerifyNone %v): %s, want silent:\n%s", s, verify, fixed.kind, fixed.out)
			}
			want, ok := expect[s]
			if o, isOrder := orderOnly[s]; isOrder && (c.detect == "" || strings.EqualFold(c.detect, "order")) {
				want, ok = o, true
			}
			if !ok || off {
				t.Logf("TestBug%s (VerifyNone %v): %s; not yet expected to be found", s, verify, bug.kind)
				continue
			}
			w := want.plain
			if verify {
				w = want.verify
			}
			if reported(bug.kind) != w {
				t.Errorf("TestBug%s (VerifyNone %v): %s, want found %v:\n%s", s, verify, bug.kind, w, bug.out)
			}
		}
	}
}

// TestCatalog, with LOCKSMITH_CATALOG=1, runs every shape and twin
// LOCKSMITH_CATALOG_RUNS times (10) in each configuration, without and
// with detect.VerifyNone, and prints the table.
func TestCatalog(t *testing.T) {
	if os.Getenv("LOCKSMITH_CATALOG") != "1" {
		t.Skip("set LOCKSMITH_CATALOG=1 for the full table")
	}
	n := 10
	if s := os.Getenv("LOCKSMITH_CATALOG_RUNS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("LOCKSMITH_CATALOG_RUNS=%q: want a positive count", s)
		}
		n = v
	}
	k := build(t)
	shapes := k.shapes(t)
	var jobs []job
	for _, c := range configs {
		for _, tn := range k.tests {
			for _, verify := range []bool{false, true} {
				for i := 0; i < n; i++ {
					jobs = append(jobs, job{tn, c, verify})
				}
			}
		}
	}
	// Mixed, so that runs waiting out a deadline overlap the quick ones.
	rand.New(rand.NewSource(1)).Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
	start := time.Now()
	res := k.runAll(jobs, 64)
	t.Logf("%d runs in %v", len(jobs), time.Since(start).Round(time.Second))

	var b strings.Builder
	fmt.Fprintf(&b, "\nfound / runs (%d runs each); a cell is \"without helper · with detect.VerifyNone\"; the kinds seen follow\n\n", n)
	b.WriteString("| shape |")
	for _, c := range configs {
		fmt.Fprintf(&b, " %s |", c.name)
	}
	b.WriteString(" kinds |\n|---|")
	for range configs {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	for _, s := range shapes {
		fmt.Fprintf(&b, "| %s |", s)
		kinds := map[string]bool{}
		for _, c := range configs {
			var cell []string
			for _, verify := range []bool{false, true} {
				found := 0
				for _, r := range res[job{"TestBug" + s, c, verify}] {
					kinds[r.kind] = true
					if reported(r.kind) {
						found++
					}
				}
				cell = append(cell, fmt.Sprintf("%d/%d", found, n))
			}
			fmt.Fprintf(&b, " %s |", strings.Join(cell, " · "))
		}
		var ks []string
		for k := range kinds {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		fmt.Fprintf(&b, " %s |\n", strings.Join(ks, ", "))
	}
	b.WriteString("\nfalse reports on the fixed twins (runs not silent):\n\n| config | without helper | with VerifyNone |\n|---|---|---|\n")
	total := 0
	var bad []string
	for _, c := range configs {
		var cnt [2]int
		for i, verify := range []bool{false, true} {
			for _, s := range shapes {
				for _, r := range res[job{"TestFixed" + s, c, verify}] {
					if r.kind != silent {
						cnt[i]++
						bad = append(bad, fmt.Sprintf("TestFixed%s (%s, VerifyNone %v): %s\n%s", s, c.name, verify, r.kind, r.out))
					}
				}
			}
		}
		total += cnt[0] + cnt[1]
		fmt.Fprintf(&b, "| %s | %d/%d | %d/%d |\n", c.name, cnt[0], n*len(shapes), cnt[1], n*len(shapes))
	}
	fmt.Fprintf(&b, "\ntotal false reports: %d\n", total)
	t.Log(b.String())
	for _, s := range bad {
		t.Error(s)
	}
}
