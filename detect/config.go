package detect

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locksmith-go/locksmith/internal/compat"
	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/rt"
)

// Mode selects how much the detector does.
type Mode int32

const (
	// Off does no checks and no reports, and no bookkeeping on the
	// uncontended path. A goroutine about to park still registers as
	// blocked (a sharded map write on each side of the park), so that a
	// switch to Cycles or Order sees the goroutines already parked. Owner
	// checks (recursive locking, unlock by a non-owner) still hold: they
	// are part of the locks.
	Off Mode = iota
	// Cycles, the default, checks the wait-for graph each time a goroutine
	// is about to park on a locksmith lock (a Mutex, Monitor, RWMutex or
	// RWMonitor, or a Cond wait's reacquire), and reports a deadlock the
	// moment it would form. The uncontended fast path does no extra work.
	Cycles
	// Order is Cycles plus lock-order validation as Linux's lockdep does
	// it, and wait-timeout reports (DefaultOrderWaitTimeout unless
	// WithWaitTimeout says otherwise).
	Order
)

// The modes are the engine's mode words, which install hands to
// core.SetMode unchanged: each index below is a compile-time zero.
var (
	_ = [1]struct{}{}[Off-Mode(core.ModeOff)]
	_ = [1]struct{}{}[Cycles-Mode(core.ModeCycles)]
	_ = [1]struct{}{}[Order-Mode(core.ModeOrder)]
)

// String returns the mode's name as LOCKSMITH_DETECT spells it: "off",
// "cycles" or "order" (ParseMode reads it back), or "detect.Mode(n)" for
// a value that is not a mode.
func (m Mode) String() string {
	switch m {
	case Off:
		return "off"
	case Cycles:
		return "cycles"
	case Order:
		return "order"
	}
	return fmt.Sprintf("detect.Mode(%d)", int32(m))
}

// ParseMode parses a mode name, as the LOCKSMITH_DETECT environment
// variable gives it: "off", "cycles" or "order", each also accepted
// capitalised ("Order", as the constants are spelled) and in upper case
// ("ORDER"). Any other spelling is an error.
func ParseMode(s string) (Mode, error) {
	for _, m := range []Mode{Off, Cycles, Order} {
		if spelledAs(s, m.String()) {
			return m, nil
		}
	}
	return 0, fmt.Errorf("detect: unknown mode %q (want off, cycles or order; Off or OFF spellings work too)", s)
}

// spelledAs reports whether s is name, Name or NAME.
func spelledAs(s, name string) bool {
	return s == name || s == strings.ToUpper(name[:1])+name[1:] || s == strings.ToUpper(name)
}

// DefaultOrderWaitTimeout is the wait timeout in force in Order mode unless
// WithWaitTimeout or LOCKSMITH_WAIT_TIMEOUT sets another.
const DefaultOrderWaitTimeout = 30 * time.Second

// DefaultTestWaitTimeout is the wait timeout in force in a test binary in
// Cycles and Order modes unless WithWaitTimeout or LOCKSMITH_WAIT_TIMEOUT
// sets another. A test that hangs on a lock is so reported, with the
// holder's stack, at most a quarter of the timeout after it, long before
// go test's default -timeout ends the binary with every stack and no word
// of the lock, and before a -timeout of a minute does. A correct test
// waits for a lock far less long: docs/detection.md has the measurement
// over the library's suite and those bench/cmd/suitecost runs.
const DefaultTestWaitTimeout = 30 * time.Second

// inTestBinary is rt.TestBinary(), read once at initialisation.
var inTestBinary bool

// config is immutable once published; Configure swaps it whole.
type config struct {
	mode        Mode
	reporter    func(*Report) // nil: defaultReporter
	problems    *problemTable // the problems reported to reporter (see note)
	waitTimeout time.Duration // meaningful when waitSet
	waitSet     bool
}

// effectiveWaitTimeout is the wait timeout in force, 0 for none.
func (c *config) effectiveWaitTimeout() time.Duration {
	switch {
	case c.mode == Off:
		return 0
	case c.waitSet:
		return c.waitTimeout
	case inTestBinary:
		return DefaultTestWaitTimeout
	case c.mode == Order:
		return DefaultOrderWaitTimeout
	}
	return 0
}

// An Option changes one setting in Configure. Options are made by WithMode,
// WithReporter and WithWaitTimeout; the zero Option changes nothing.
type Option struct {
	apply func(*config) // nil for the zero Option
}

// applyTo changes c as o says.
func (o Option) applyTo(c *config) {
	if o.apply != nil {
		o.apply(c)
	}
}

// ErrBadOption is matched (with errors.Is) by the panic value of an option
// constructor given an argument outside its domain: WithMode with a Mode
// other than Off, Cycles or Order, WithWaitTimeout with a negative
// duration.
var ErrBadOption = errors.New("invalid option")

// WithMode sets the detection mode. It panics with an error matching
// ErrBadOption if m is not Off, Cycles or Order.
func WithMode(m Mode) Option {
	if m < Off || m > Order {
		panic(core.Misuse(fmt.Sprintf("detect: WithMode(%d): not Off, Cycles or Order", int32(m)), ErrBadOption))
	}
	return Option{func(c *config) { c.mode = m }}
}

// WithReporter sends every report to f. f is called without any lock of
// locksmith's own held, on the goroutine that found the problem
// (the watchdog's, for wait timeouts), and may itself use locksmith locks.
// nil restores the default: the reporter named by LOCKSMITH_DETECT_REPORT,
// else PanicReporter in a test binary and PrintReporter elsewhere.
//
// For a Deadlock, the goroutine that would close the cycle still panics
// (or LockContext still returns the error, or LockTimeout false) after f
// returns, since waiting on would block it forever.
//
// f may panic or end its goroutine (runtime.Goexit, as t.FailNow does).
// For a Deadlock or LockOrder report, that goes on in the goroutine that
// was acquiring the lock, which then does not hold it: a LockOrder report
// is made after the lock is taken, and the acquisition is undone (the lock
// released, any waiter woken) before the panic or exit continues. A Cond
// wait whose reacquire fails this way returns without the lock, as for a
// deadlock (see condvar.Cond.Wait). A WaitTimeout report is delivered on
// the watchdog's own goroutine: a panic there is recovered and printed to
// stderr as a reporter failure, with the report, and the watchdog keeps
// running.
//
// Each problem is reported once to a reporter configuration: Configure
// with WithReporter starts afresh, so that a test that installs its own
// reporter hears of every problem its code makes.
//
// The reporter is the process's: overlapping Configure calls (parallel
// tests) are layered, and the last one's reporter hears of every report,
// whichever test made it. To fail the test that made a finding, use
// VerifyNone instead.
func WithReporter(f func(*Report)) Option {
	tab := &problemTable{} // one per call: the same for every recompute of the configuration
	return Option{func(c *config) { c.reporter, c.problems = f, tab }}
}

// PrintReporter prints r to standard error. It is the default reporter
// outside test binaries.
func PrintReporter(r *Report) { fmt.Fprint(stderr(), r.String()) }

// PanicReporter panics with a *LockOrderError for a LockOrder report, in
// the goroutine whose acquisition closed the inversion, and prints any
// other report as PrintReporter does (wait timeouts are warnings; a
// deadlock panics anyway, with a *DeadlockError). It is the default
// reporter in a test binary (a program linked by go test, as
// testing.Testing reports it), so that an inversion
// fails go test with the report and the test's name, instead of being
// printed in the hidden output of a passing package.
//
// In a test binary, the panic's message names the test whose goroutine
// made the inversion (the goroutine's own test, or the test that started
// it), as go test does not when the panic is not on the test's goroutine.
//
// In a test binary a wait-timeout or Cond-wait report panics too, once
// printed, from the watchdog's goroutine: a goroutine has waited longer
// than the wait timeout (30 s by default in tests) for a lock or a
// signal, which a test that passes never does, and no helper (VerifyNone,
// VerifyTestMain) took the report to fail its test, so only a panic makes
// the package fail. The message names the waiter's test. Outside test
// binaries these reports are only printed.
func PanicReporter(r *Report) {
	switch {
	case r.Kind == LockOrder:
		if inTestBinary && !r.claimDone {
			claimTest(r)
		}
		panic(&LockOrderError{Report: r})
	case inTestBinary && (r.Kind == WaitTimeout || r.Kind == CondWait):
		if !r.claimDone {
			claimTest(r)
		}
		PrintReporter(r)
		panic(&waitStop{fmt.Sprintf("detect: %s (%s) -- with no detect.VerifyNone or detect.VerifyTestMain to fail the test and go on, the test binary stops here",
			r.Line(), strings.TrimSuffix(madeIn(r), ":"))})
	}
	PrintReporter(r)
}

// waitStop is PanicReporter's panic value for a wait-timeout or Cond-wait
// report in a test binary, which the watchdog does not recover (see
// deliverRecovered).
type waitStop struct{ msg string }

func (e *waitStop) Error() string { return e.msg }

// WithWaitTimeout reports, once, any goroutine blocked on one locksmith
// lock for longer than d, naming the holder and its current stack. d > 0
// turns the report on in Cycles and Order modes; d == 0 turns it off.
// Without this option (or LOCKSMITH_WAIT_TIMEOUT, see WaitTimeoutEnvVar)
// Order mode uses DefaultOrderWaitTimeout and Cycles mode has none, except
// in a test binary, where both use DefaultTestWaitTimeout. A negative d
// panics with an error matching ErrBadOption.
// Waits are measured in real time, also inside testing/synctest bubbles,
// by one timer outside any bubble that fires every d/4 while d > 0.
func WithWaitTimeout(d time.Duration) Option {
	if d < 0 {
		panic(core.Misuse(fmt.Sprintf("detect: WithWaitTimeout(%v): negative", d), ErrBadOption))
	}
	return Option{func(c *config) { c.waitTimeout, c.waitSet = d, true }}
}

var (
	cfg   atomic.Pointer[config]
	cfgMu sync.Mutex // serialises Configure and restore

	// The configuration in force is base with the options of every
	// Configure call not yet restored applied over it, oldest first.
	base   *config  // guarded by cfgMu: start-up, plus folded layers
	layers []*layer // guarded by cfgMu
)

// layer is one Configure call's options, in force until its restore.
type layer struct {
	opts     []Option
	orphaned bool // its restore function can no longer be called
}

func current() *config { return cfg.Load() }

// CurrentMode returns the mode in force.
func CurrentMode() Mode { return current().mode }

// Configure changes the detector's configuration: it starts from the
// configuration in force and changes only what opts name. It returns a
// function that undoes exactly this call's changes (calling it more than
// once does nothing more), which suits tests:
//
//	defer detect.Configure(detect.WithMode(detect.Order))()
//
// Calls restored in the reverse order of their Configure calls, as defers
// and t.Cleanup run them, put back the configuration in force before each
// call. Calls that overlap (parallel tests) are layered: the configuration
// in force is always the start-up configuration with the options of every
// Configure call not yet restored applied over it, in the order of the
// calls. Restoring one call removes its options and keeps the others', so
// that a restore never puts back a configuration another call is still
// relying on, and once every call is restored the start-up configuration
// is back.
//
// A restore function that is dropped (the usual case for a program that
// configures the detector once at start-up) keeps its call's options in
// force for good; once the garbage collector finds it unreachable, the
// call is merged into the start-up configuration, so that repeated calls
// do not accumulate.
//
// Configure is safe to call concurrently with locking: the configuration
// is an immutable value swapped atomically, and locks read only the mode.
func Configure(opts ...Option) (restore func()) {
	ly := &layer{opts: opts}
	cfgMu.Lock()
	layers = append(layers, ly)
	recompute()
	cfgMu.Unlock()
	h := &restorer{ly: ly}
	compat.AddCleanup(h, orphan, ly)
	return h.restore
}

// restorer is what a restore function holds; the cleanup on it tells when
// the function is gone.
type restorer struct {
	once sync.Once
	ly   *layer
}

func (h *restorer) restore() {
	h.once.Do(func() {
		cfgMu.Lock()
		defer cfgMu.Unlock()
		if i := slices.Index(layers, h.ly); i >= 0 {
			layers = slices.Delete(layers, i, i+1)
			fold()
			recompute()
		}
	})
}

// orphan marks ly as one that can no longer be restored.
func orphan(ly *layer) {
	cfgMu.Lock()
	defer cfgMu.Unlock()
	ly.orphaned = true
	fold()
}

// fold merges the oldest layers that can no longer be restored into base,
// up to the oldest one that still can: merging a later one would move it
// under an older layer it was applied over. The configuration in force
// does not change. cfgMu is held.
func fold() {
	n := 0
	for n < len(layers) && layers[n].orphaned {
		next := *base
		for _, o := range layers[n].opts {
			o.applyTo(&next)
		}
		base = &next
		n++
	}
	if n > 0 {
		layers = slices.Delete(layers, 0, n)
	}
}

// recompute installs base with every layer applied; cfgMu is held.
func recompute() {
	next := *base
	for _, ly := range layers {
		for _, o := range ly.opts {
			o.applyTo(&next)
		}
	}
	install(&next)
}

// install publishes c; cfgMu is held.
func install(c *config) {
	// Into Order mode as well as out of it: an acquisition that core
	// forwarded in one Order period may make its lone record after Order
	// mode was left, and its release, made while Order mode was off, is
	// not seen; only a change of epoch at the next entry tells that
	// record apart from one made in the new period (lone.go).
	if old := cfg.Load(); old != nil && (old.mode == Order) != (c.mode == Order) {
		orderEpoch.Add(1)
	}
	cfg.Store(c)
	core.SetMode(int32(c.mode))
	watchdogConfigured(c.effectiveWaitTimeout())
}

// EnvVar is the environment variable read at start-up for the mode:
// off, cycles or order (see ParseMode for the spellings accepted). Any
// other non-empty value stops the program at start-up with a panic naming
// the value and the valid ones.
const EnvVar = "LOCKSMITH_DETECT"

// ReportEnvVar is the environment variable read at start-up for the
// default reporter: "panic" for PanicReporter, "print" for PrintReporter
// (also capitalised or in upper case). Unset or empty, the default is
// PanicReporter in a test binary and PrintReporter elsewhere. A reporter
// set with WithReporter takes precedence. Any other value stops the
// program at start-up with a panic.
const ReportEnvVar = "LOCKSMITH_DETECT_REPORT"

// WaitTimeoutEnvVar is the environment variable read at start-up for the
// wait timeout: a duration as time.ParseDuration reads it ("45s", "2m"),
// "0" to turn wait-timeout reports off. Unset or empty, the defaults of
// WithWaitTimeout hold; WithWaitTimeout takes precedence. A negative or
// unreadable value stops the program at start-up with a panic.
const WaitTimeoutEnvVar = "LOCKSMITH_WAIT_TIMEOUT"

// waitFromEnv returns the wait timeout the environment sets, if any, and
// panics on a value it cannot read.
func waitFromEnv() (d time.Duration, set bool) {
	v := os.Getenv(WaitTimeoutEnvVar)
	if v == "" {
		return 0, false
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		panic(fmt.Errorf("detect: %s=%q: not a wait timeout; want a duration such as 30s or 2m, 0 for none, or unset for the default", WaitTimeoutEnvVar, v))
	}
	return d, true
}

// defaultReporter is the reporter used while none is configured; it is
// chosen once, at initialisation.
var defaultReporter func(*Report) = PrintReporter

// envVars are the environment variables the detector reads.
var envVars = [...]string{EnvVar, ReportEnvVar, WaitTimeoutEnvVar}

// fromEnv returns the mode and the default reporter that the environment
// asks for, and panics on a value it does not know: a typo must not
// silently leave the detector in another mode.
func fromEnv(inTest bool) (Mode, func(*Report)) {
	mode := defaultMode(inTest)
	if v := os.Getenv(EnvVar); v != "" {
		m, err := ParseMode(v)
		if err != nil {
			panic(fmt.Errorf("detect: %s=%q: not a detection mode; want off, cycles or order (also Off, OFF, ...), or unset for the default (%v here)", EnvVar, v, mode))
		}
		mode = m
	}
	rep, name := PrintReporter, "print"
	if inTest {
		rep, name = PanicReporter, "panic, in a test binary"
	}
	switch v := os.Getenv(ReportEnvVar); {
	case v == "":
	case spelledAs(v, "panic"):
		rep = PanicReporter
	case spelledAs(v, "print"):
		rep = PrintReporter
	default:
		panic(fmt.Errorf("detect: %s=%q: not a reporter; want panic or print (also Panic, PANIC, ...), or unset for the default (%s)",
			ReportEnvVar, v, name))
	}
	return mode, rep
}

// defaultMode is the mode with LOCKSMITH_DETECT unset: Order in a test
// binary, where a lock-order inversion is found the first time its two
// orders are taken, whether or not the deadlock forms, and Cycles
// elsewhere, where the cost of every first nesting matters more. A
// fresh lock's first acquisitions, alone or nested, allocate nothing on
// the calling goroutine in either (lone.go, nest.go), so suites that
// count allocations pass in both.
//
// Under the race detector a test binary too defaults to Cycles: Order
// mode's lock-order graph is guarded by a mutex the race detector sees,
// so two goroutines that each nest a new pair of locks are ordered by
// it, and a data race between them would go unreported (see "Order mode
// and the race detector" in docs/detection.md). A default must hide no
// race; LOCKSMITH_DETECT=order asks for Order mode under -race too.
func defaultMode(inTest bool) Mode {
	if inTest && !raceBuild {
		return Order
	}
	return Cycles
}

// The environment is read during package initialisation, so that locks
// taken by other packages' initialisation already run in the mode asked
// for. In a test binary run by go test with its result cache, that is too
// early to count: go test learns which variables a test depends on from a
// log that the test binary keeps of os.Getenv and os.LookupEnv calls, and
// that log starts only when testing.M.Run starts the tests. A variable
// read before is not part of the cached result's key, and a run with
// another LOCKSMITH_DETECT would be served the result of the first. So
// the variables are read again once the log has started, from the first
// lock operation that sees it started (core.SetRecheck routes lock
// operations to the recheck until then, through the outlined hooks: the
// assembly fast paths stay off meanwhile).
//
// Whether the log has started is read from the file system: go test names
// the log file with -test.testlogfile in a fresh directory, and testing
// creates it when the log starts (rt.TestLogStarted, which must not use os,
// or the check itself would be logged as an input). The main goroutine,
// which runs initialisation and TestMain, only reads the variables: its
// lock operations before the log starts would otherwise pay a stat each.
//
// The recheck gives up after recheckFor of real time, so that a binary
// whose log never starts (a TestMain that does not call m.Run, a package
// with only examples, which run on the main goroutine) does not pay two
// lookups and a stat on every lock operation, with the fast paths off,
// for good. A go test run starts the log as soon as initialisation and
// TestMain's setup are done, before the first test: a minute leaves that
// setup a wide margin on a loaded machine. A TestMain that spends longer
// than that before m.Run loses the re-read, and go test's cache then does
// not key that package's result on the detector's variables. The clock
// is read once every recheckClockEvery checks, and is the runtime's real
// one (core.Now): time.Now inside a testing/synctest bubble is fake.
//
// Rejected alternatives: reading the variables on the first lock
// operation only, which happens during initialisation or TestMain in many
// programs, before the log starts; reading them on every operation, which
// would cost every lock in a test binary an environment lookup under the
// environment's lock for the whole run; bounding the number of checks
// instead of the time, which a setup that takes many locks before m.Run
// (building a large fixture) would exhaust before the log starts.
type testLogRecheck struct {
	file   string        // the log file go test passed to this test binary
	giveUp int64         // the core.Now after which check gives up
	checks atomic.Uint32 // calls of check, for reading the clock
}

// recheckFor is how long a test binary looks for go test's log (see
// testLogRecheck).
const recheckFor = time.Minute

// recheckClockEvery is how many checks share one reading of the clock.
const recheckClockEvery = 64

// newTestLogRecheck returns the recheck for go test's log file, giving up
// d from now.
func newTestLogRecheck(file string, d time.Duration) *testLogRecheck {
	return &testLogRecheck{file: file, giveUp: core.Now() + int64(d)}
}

// check is the recheck core.SetRecheck calls with the goroutine ID of
// every lock operation; it reports whether it is done.
func (r *testLogRecheck) check(g int64) (done bool) {
	for _, v := range envVars {
		os.LookupEnv(v)
	}
	if g != mainGoroutine && rt.TestLogStarted(r.file) {
		return true
	}
	return r.checks.Add(1)%recheckClockEvery == 0 && core.Now() > r.giveUp
}

// mainGoroutine is the goroutine that runs main, initialisation and
// TestMain.
const mainGoroutine = 1

func init() {
	inTest := rt.TestBinary() // as testing.Testing, which would link package testing into every program
	inTestBinary = inTest
	mode, rep := fromEnv(inTest)
	defaultReporter = rep
	c := &config{mode: mode, problems: &problemTable{}}
	c.waitTimeout, c.waitSet = waitFromEnv()
	cfgMu.Lock()
	base = c
	install(c)
	cfgMu.Unlock()
	core.SetEngine(&engine{})
	if inTest {
		if f := rt.TestLogFile(os.Args[1:]); f != "" {
			core.SetRecheck(newTestLogRecheck(f, recheckFor).check)
		}
	}
}
