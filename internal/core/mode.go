package core

import "github.com/locksmith-go/locksmith/internal/compat"

// Detection modes; package detect documents them.
const (
	ModeOff int32 = iota
	ModeCycles
	ModeOrder
)

// modeRecheck, or'ed into the mode word, sends lock operations to the
// outlined Order-mode hooks even in Off and Cycles modes, until the
// recheck function installed with SetRecheck says it is done. Values at or
// above ModeOrder are exactly "Order, or a recheck pending", so the fast
// paths still test the word with one comparison.
const modeRecheck int32 = 4

// mode is the mode word: a Mode value, plus modeRecheck.
var mode compat.Int32

func init() { mode.Store(ModeCycles) }

// Mode returns the detection mode in force.
func Mode() int32 { return mode.Load() &^ modeRecheck }

// SetMode sets the detection mode (package detect calls it), keeping a
// pending recheck, and the fast words of the assembly fast paths with it.
func SetMode(m int32) {
	for {
		old := mode.Load()
		if mode.CompareAndSwap(old, m|old&modeRecheck) {
			break
		}
	}
	updateFastWords()
}

// OrderOn reports whether the lock must call Acquired and Released: in
// Order mode, or while a recheck is pending.
func OrderOn() bool { return mode.Load() >= ModeOrder }

// OrderWord returns the mode word. The lock operations load it once each,
// one load of a word that is only written when the configuration
// changes, and at or above ModeOrder (Order mode, or a recheck pending)
// pass it on to Acquired or Released (AcquiredRW, ReleasedRW), which so
// test the recheck without loading the word again: under the race
// detector an atomic load is a call into the race runtime, which would
// otherwise come twice on every Lock and Unlock in Order mode (`go test
// -race -run '^$' -bench OrderShortLivedGoroutines ./detect` shows its
// share).
func OrderWord() int32 { return mode.Load() }

// recheck is set by SetRecheck during initialisation and read afterwards.
var recheck func(g int64) (done bool)

// SetRecheck makes the lock operations of every goroutine call f (with
// the goroutine's ID) until f returns true. Package detect uses it in a
// test binary to read its environment variables again once go test's
// log of the variables a test consults has started. It must be called
// during package initialisation.
func SetRecheck(f func(g int64) (done bool)) {
	recheck = f
	mode.Or(modeRecheck)
	updateFastWords()
}

// runRecheck runs the pending recheck for g and reports whether Order mode is
// on. It is reached only from the outlined hooks, while mode has
// modeRecheck set.
func runRecheck(g int64) (order bool) {
	if recheck(g) {
		mode.And(^modeRecheck)
		updateFastWords()
	}
	return Mode() == ModeOrder
}

// Engine is what package detect installs: report building and the
// lock-order graph. Methods are called without any core lock held.
type Engine interface {
	// Stacks is called with a wait-for cycle that a first walk found,
	// before a second walk verifies it; what it returns (the goroutines'
	// stacks) reaches Deadlock in Cycle.Stacks if the cycle is verified.
	Stacks(cycle []Hop) any
	// Deadlock receives a verified wait-for cycle that the calling
	// goroutine (c.Hops[0].G) would close, and returns the error that
	// Lock panics with and LockContext returns.
	Deadlock(c *Cycle) error
	// Exited receives the wait of the calling goroutine (w.G) for a lock
	// whose holder, goroutine holder, has exited holding it (w.HolderRead:
	// for reading, and w.G is the writer waiting for the readers), and
	// returns the error that Lock panics with and LockContext returns.
	Exited(w Hop, holder int64) error
	// Acquired and Released are called in Order mode only. Acquired
	// records the acquisition and returns nil, or, if it found problems
	// to report, a function that delivers the reports, which the caller
	// runs with the acquisition's undo armed (a reporter may panic).
	Acquired(l *Lock, k *Class, g int64, try bool) (report func())
	Released(l *Lock, g int64)
	// AcquiredRW and ReleasedRW are their counterparts for an RWLock
	// (l is its writer lock), read saying which mode; a release is
	// forwarded after the lock changed. Order mode only.
	AcquiredRW(l *Lock, k *Class, g int64, try, read bool) (report func())
	ReleasedRW(l *Lock, g int64, read bool)
	// Parked is called when a goroutine has registered as blocked, in
	// Cycles and Order modes, so that the wait-timeout watchdog can arm.
	Parked()
	// NewMeta returns a zero Meta for a lock that needs metadata, never
	// one handed out before. The engine allocates it together with its
	// own per-lock state, many locks' to an allocation, so that a lock's
	// detection state costs a fraction of an allocation (and the
	// runtime's weak handle one).
	NewMeta() *Meta
	// Forget is called with the Metas of locks found collected, once per
	// garbage collection that found any (see scanMetas). They are gone,
	// and their IDs are not given out again. ms is reused once Forget
	// returns.
	Forget(ms []*Meta)
}

var engine Engine

// SetEngine installs e. It must be called during package initialisation.
func SetEngine(e Engine) { engine = e }

// Acquired forwards Order-mode bookkeeping for a lock g has just taken to
// the engine, which may deliver a LockOrder report. If the engine does not
// return (the reporter panicked, or ended the goroutine with
// runtime.Goexit as t.FailNow does), the acquisition is undone before the
// panic or the exit goes on: the record is dropped and the lock released,
// waking a waiter if there is one. So a Lock, TryLock or LockContext that
// panics never leaves its caller holding the lock, whichever path the
// panic came from.
//
// mw is the mode word the caller loaded (OrderWord), at or above
// ModeOrder. While a recheck is pending (mw is not ModeOrder), Acquired
// and Released run it first, and forward only in Order mode.
//
// The undo is armed (a deferred call) only around the delivery of
// reports: the engine's bookkeeping itself does not panic, and a defer on
// every acquisition (a closure call on the way out) is a visible share of
// the CPU profile of an uncontended Lock/Unlock pair in Order mode
// (`go run ./bench/cmd/lockbench -locks 'mutex.Mutex/detect=order'` with a
// CPU profile of its process).
func Acquired(l *Lock, k *Class, g int64, try bool, mw int32) {
	if mw != ModeOrder && !runRecheck(g) {
		return
	}
	if report := engine.Acquired(l, k, g, try); report != nil {
		reportOrUndo(l, g, report)
	}
}

// reportOrUndo runs report; if it does not return, g's acquisition of l
// is undone.
func reportOrUndo(l *Lock, g int64, report func()) {
	done := false
	defer func() {
		if !done {
			engine.Released(l, g)
			l.Release(g)
		}
	}()
	report()
	done = true
}

// Released forwards Order-mode bookkeeping to the engine; mw is as for
// Acquired.
func Released(l *Lock, g int64, mw int32) {
	if mw != ModeOrder && !runRecheck(g) {
		return
	}
	engine.Released(l, g)
}
