package deadlock

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/rt"
)

// TimerPoolMode is the type of Opts.TimerPool.
type TimerPoolMode int

const (
	// TimerPoolDefault is the zero value of Opts.TimerPool.
	TimerPoolDefault TimerPoolMode = iota
	// TimerPoolEnabled is accepted and has no effect.
	TimerPoolEnabled
	// TimerPoolDisabled is accepted and has no effect.
	TimerPoolDisabled
)

// Opts control how deadlock detection behaves. Set them at start-up (when
// parsing flags, say), or while no goroutine uses a lock of this package:
// the locks read them without synchronization, as go-deadlock's do.
//
// Opts take effect as one detect.Configure call (see the package doc),
// made again by the first Lock, RLock or TryLock after a change of
// Disable, DisableLockOrderDetection or DeadlockTimeout. The other fields
// are read when a report is made.
var Opts = struct {
	// Disable turns detection off (detect.Off): the locks still exclude,
	// and a lock call by a goroutine that already holds the lock still
	// waits for another goroutine to unlock it, without any report.
	Disable bool
	// DisableLockOrderDetection turns lock-order checking off
	// (detect.Cycles instead of detect.Order): actual deadlocks are still
	// refused the moment they would form, and long waits reported.
	DisableLockOrderDetection bool
	// DeadlockTimeout: a goroutine blocked on one lock for longer is
	// reported, once (detect.WithWaitTimeout). Ignored if
	// DeadlockTimeout <= 0.
	DeadlockTimeout time.Duration
	// OnPotentialDeadlock is called after each report has been written to
	// LogBuf, on the goroutine that found the problem (the detector's
	// watchdog, for a long wait). The default never ends the process: it
	// does what detect's default reporter does after printing a report
	// (see the package doc). nil behaves as the default.
	OnPotentialDeadlock func()
	// MaxMapSize is accepted and has no effect: the lock-order graph
	// forgets a lock when it is garbage collected, never all at once.
	MaxMapSize int
	// PrintAllCurrentGoroutines adds every goroutine's stack to each
	// report written to LogBuf.
	PrintAllCurrentGoroutines bool
	// TimerPool is accepted and has no effect: no lock of this package
	// keeps a timer of its own while it waits.
	TimerPool TimerPoolMode
	// LogBuf receives each report; nil writes none. A *bufio.Writer is
	// flushed after each report.
	LogBuf io.Writer
}{
	DeadlockTimeout: 30 * time.Second,
	MaxMapSize:      1024 * 64,
	LogBuf:          os.Stderr,
}

// header starts each report written to LogBuf, as go-deadlock's do, so
// that whatever searches logs for it still finds them.
const header = "POTENTIAL DEADLOCK:"

// errDefaultAction is the panic value of the default OnPotentialDeadlock.
// The report delivering a finding recovers it and does the default
// action there, where the report is known; a replacement that calls the
// previous value last (prev := Opts.OnPotentialDeadlock; ...; prev()),
// as go-deadlock programs do around its os.Exit, so still gets it.
var errDefaultAction = errors.New("deadlock: the default Opts.OnPotentialDeadlock called outside a report")

func defaultOnPotentialDeadlock() { panic(errDefaultAction) }

// The default is set here rather than in Opts' initializer, which go doc
// prints whole, so that the documentation names nothing a reader cannot
// look up.
func init() { Opts.OnPotentialDeadlock = defaultOnPotentialDeadlock }

// logMu serializes writes to Opts.LogBuf.
var logMu sync.Mutex

// setting is the part of Opts that maps onto detect's configuration.
type setting struct {
	disable, noOrder bool
	timeout          time.Duration
}

var (
	applied atomic.Pointer[setting] // the setting in force, nil before the first lock call
	applyMu sync.Mutex              // serializes apply
	restore func()                  // guarded by applyMu: undoes the Configure of applied
)

// check compares Opts with the setting in force, and applies them if
// they changed: three loads and an atomic load on every lock call.
func check() {
	s := applied.Load()
	if s == nil || s.disable != Opts.Disable || s.noOrder != Opts.DisableLockOrderDetection || s.timeout != Opts.DeadlockTimeout {
		apply()
	}
}

// apply replaces this package's Configure call by one for Opts.
//
// Rejected alternative: a Configure call per lock call, or a setter the
// program must call. The first costs a configuration swap per Lock, the
// second is not go-deadlock's API.
func apply() {
	applyMu.Lock()
	defer applyMu.Unlock()
	want := setting{Opts.Disable, Opts.DisableLockOrderDetection, Opts.DeadlockTimeout}
	if s := applied.Load(); s != nil && *s == want {
		return
	}
	if restore != nil {
		restore()
	}
	mode, wait := detect.Order, want.timeout
	if want.noOrder {
		mode = detect.Cycles
	}
	if want.disable {
		mode, wait = detect.Off, 0
	}
	if wait < 0 {
		wait = 0
	}
	restore = detect.Configure(detect.WithMode(mode), detect.WithWaitTimeout(wait), detect.WithReporter(report))
	applied.Store(&want)
}

// unapply removes this package's Configure call, if any; the next lock
// call makes it again. Tests use it to leave the detector as they found it.
func unapply() {
	applyMu.Lock()
	defer applyMu.Unlock()
	if restore != nil {
		restore()
		restore = nil
	}
	applied.Store(nil)
}

// waitTimeout is the wait timeout of the setting in force, 0 for none.
func waitTimeout() time.Duration {
	s := applied.Load()
	if s == nil || s.disable {
		return 0
	}
	return s.timeout
}

// report is the detector's reporter while Opts are applied. A wait for a
// lock whose holder has exited is not reported: another goroutine may
// still unlock this package's locks (sync's rule), so the waiter waits for
// that hand-off instead (see lockedOrHandedOff), and a hand-off that does
// not come within DeadlockTimeout is reported then.
func report(r *detect.Report) {
	if heldByExited(r) {
		return
	}
	writeReport(func(w io.Writer) { fmt.Fprint(w, r.String()) })
	notify(func() {
		// What the detector's default reporter does once it has printed:
		// a lock-order inversion fails the goroutine that made it where
		// PanicReporter is the default (a test binary, unless
		// LOCKSMITH_DETECT_REPORT says print); the rest are warnings, and
		// a deadlock's Lock panics anyway.
		if r.Kind == detect.LockOrder && panicsByDefault() {
			detect.PanicReporter(r)
		}
	})
}

// reportSelfWait reports a goroutine that has waited d to lock a lock it
// holds: recursive locking, or a hand-off whose Unlock has not come.
func reportSelfWait(what string, d time.Duration) {
	buf := make([]byte, 16<<10)
	buf = buf[:runtime.Stack(buf, false)]
	writeReport(func(w io.Writer) {
		fmt.Fprintf(w, "Recursive locking: a goroutine has been trying for more than %v to lock %s that it holds\n", d, what)
		fmt.Fprintf(w, "(a deadlock, unless another goroutine is to unlock it):\n%s\n", buf)
	})
	notify(func() {})
}

// writeReport writes a report to Opts.LogBuf, headed and, if asked,
// followed by every goroutine's stack.
func writeReport(body func(io.Writer)) {
	logMu.Lock()
	defer logMu.Unlock()
	w := Opts.LogBuf
	if w == nil {
		return
	}
	fmt.Fprintln(w, header)
	body(w)
	if Opts.PrintAllCurrentGoroutines {
		fmt.Fprintln(w, "All current goroutines:")
		w.Write(allStacks())
	}
	fmt.Fprintln(w)
	if b, ok := w.(*bufio.Writer); ok {
		b.Flush()
	}
}

func allStacks() []byte {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// notify calls Opts.OnPotentialDeadlock, and dflt where that is the
// default (or nil).
func notify(dflt func()) {
	f := Opts.OnPotentialDeadlock
	if f == nil {
		dflt()
		return
	}
	if calledDefault(f) {
		dflt()
	}
}

// calledDefault calls f and reports whether it ended in the default's
// panic; any other panic goes on.
func calledDefault(f func()) (dflt bool) {
	defer func() {
		if !dflt {
			return
		}
		switch v := recover(); v {
		case errDefaultAction:
		case nil: // runtime.Goexit (t.FailNow): let it go on
			dflt = false
		default:
			panic(v)
		}
	}()
	dflt = true
	f()
	return false
}

// panicsByDefault reports whether detect's default reporter is
// PanicReporter: LOCKSMITH_DETECT_REPORT=panic, or unset in a test binary.
func panicsByDefault() bool {
	switch v := os.Getenv(detect.ReportEnvVar); {
	case strings.EqualFold(v, "panic"):
		return true
	case v == "":
		return rt.TestBinary() // as detect decides, without linking package testing
	}
	return false
}
