package monitor

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/locksmith-go/locksmith/condvar"
	// See package mutex: the import links the deadlock detector.
	_ "github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/fpstack"
	"github.com/locksmith-go/locksmith/internal/gid"
	"github.com/locksmith-go/locksmith/misuse"
)

// ErrNotOwner is matched (with errors.Is) by the panic value of Unlock and
// of the condition methods called by a goroutine that does not hold the
// Monitor. It is the same value as mutex.ErrNotOwner and
// condvar.ErrNotOwner, so a misused Wait matches both names.
var ErrNotOwner = misuse.ErrNotOwner

// ErrNilContext is matched (with errors.Is) by the panic value of
// LockContext, WaitContext, WaitUntilContext and WaitWhileContext called
// with a nil context. It is the same value as mutex.ErrNilContext and
// condvar.ErrNilContext.
var ErrNilContext = misuse.ErrNilContext

// ErrStranded is matched (with errors.Is) by the panic value of an Unlock
// or RUnlock that could not wake a waiter left blocked in a
// testing/synctest bubble that has ended: the lock was held, while
// synctest.Test ran, by the goroutine that called Test, and the bubble
// deadlocked on it. The waiter stays blocked. An Unlock releases the lock
// all the same, and it stays usable: the stranded waiters (a writer, or
// the readers queued behind a read-write lock's writer) come off its
// queues. After an RUnlock the stranded waiter is a writer that holds the
// write lock, for good (docs/synctest.md). It is the same value as
// mutex.ErrStranded.
var ErrStranded = misuse.ErrStranded

// A Monitor is a reentrant mutual exclusion lock with a hold count.
// The zero value for a Monitor is an unlocked monitor.
//
// A Monitor must not be copied after first use.
//
// In the terminology of the Go memory model, the Unlock that releases the
// monitor (hold count back to zero) “synchronizes before” the next Lock
// that acquires it; re-entry by the owner synchronizes with nothing, since
// no other goroutine is involved.
//
// A locked Monitor is associated with the goroutine that locked it. That
// goroutine may Lock it again; each Lock adds one to the hold count and
// each Unlock takes one away; the monitor is released at zero. Unlock from
// any other goroutine panics with ErrNotOwner and changes nothing.
// Goroutines blocked in Lock park on a channel (a semaphore, in a synctest
// bubble where the wait cannot be durable). Inside a testing/synctest
// bubble they are durably blocked when the holder and the other waiters
// are goroutines of their bubble; a Monitor may be shared across bubbles
// and with goroutines outside them, but such waits are not durable (see
// mutex.Mutex and docs/synctest.md).
//
// Re-entry costs no atomic write for a Monitor without detection
// metadata: the owner sees its own ID in the lock word and increments a
// count that only it touches. (A Monitor that has metadata, from Order
// mode, a name or a report, also publishes the count with one atomic
// store, for detect.Dump.) Fairness and starvation mode are as for
// mutex.Mutex.
type Monitor struct {
	_ noCopy
	// reentries is the owner's hold count beyond the first: 0 whenever m
	// is free or held once, so a first entry writes nothing and the last
	// release leaves it as the next owner needs it. Only the owner writes
	// it and acts on its value; Unlock's assembly fast path
	// (fast_amd64.s) reads it before its owner check, and a non-owner's
	// read leads to that check failing.
	//
	// It comes first, so that it shares a cache line with the lock's
	// state word, 8 bytes on (always, for a Monitor allocated on its own,
	// which its size class places at a multiple of 32 bytes; in most
	// places inside a larger struct); after the Lock, 72 bytes on, it
	// would always be on another line, and a first-entry pair costs more
	// (lockbench, with the command in fast_amd64.s, shows the pair
	// against mutex.Mutex's).
	//
	// Rejected alternatives: the hold count itself, which a first entry
	// sets to 1 after its CompareAndSwap (a store that makes the
	// first-entry pair dearer, as the same command shows); and
	// two counts, re-entries and their releases, each written by one
	// side, so that Lock and Unlock do not pass the count through memory
	// to each other (two store-to-load forwards per re-entry pair): it
	// made no measurable difference to a re-entry pair.
	reentries int
	l         core.Lock
	cond      *condvar.Cond // the implicit condition; created by the owner
}

var _ sync.Locker = (*Monitor)(nil)

func init() {
	core.RegisterAdapter(func(l sync.Locker) (core.Adapter, bool) {
		m, ok := l.(*Monitor)
		if !ok {
			return core.Adapter{}, false
		}
		return core.Adapter{Lock: &m.l, Class: core.ClassMonitor, Cond: condLocker{m}}, true
	})
}

// Lock locks m. If the calling goroutine already holds m, Lock adds one to
// the hold count and returns at once; if another goroutine holds it, Lock
// blocks until m is available.
//
// With deadlock detection on (package detect), Lock panics with a
// *detect.DeadlockError, without taking m, if waiting would close a cycle
// of goroutines each waiting for a lock the next holds. Re-entry never
// blocks and is never reported.
func (m *Monitor) Lock() { lock(m) }

// lockGo is Lock in Go. lock is either lockGo itself or, on amd64, an
// assembly fast path (fast_amd64.s) that does the same for a first entry
// or a re-entry; it jumps to lockHeld for a monitor held by another
// goroutine or with waiters (or a failed CompareAndSwap), and here for
// Order mode or no fast goroutine ID.
//
//lint:ignore U1000 fast_amd64.s jumps here; fast_go.go calls it where the assembly is not built
//go:noinline
func lockGo(m *Monitor) {
	g := gid.Get()
	if m.l.Owner() == g {
		m.reenter()
		return
	}
	if m.l.FastAcquire(g) {
		m.l.SetHolderPC(core.SitePC(fpstack.CallerPC, entrySkip))
	} else {
		m.lockSlow(g, fpstack.CallerPC(entrySkip))
	}
	m.acquired(g, false)
}

// lockHeld is where the assembly goes when the state word it read is
// neither 0 nor the caller's (the monitor is held by another goroutine or
// has waiters), or its CompareAndSwap failed. It goes straight to the slow
// path, as lockGo does after its own CompareAndSwap fails.
//
// lockGo and lockHeld are reached by a jump from the assembly, through
// their ABI wrappers (entrySkip frames), or by a call from Lock inlined
// into its caller, so the return PC above those is the caller's site,
// which a first entry records as the holder's (core.Lock.SetHolderPC).
//
//lint:ignore U1000 only fast_amd64.s jumps here; unused where the assembly is not built
//go:noinline
func lockHeld(m *Monitor) {
	g := gid.Get()
	m.lockSlow(g, fpstack.CallerPC(entrySkip))
	m.acquired(g, false)
}

//lint:ignore U1000 called only from lockGo and lockHeld, which the assembly reaches
func (m *Monitor) lockSlow(g int64, pc uintptr) {
	if err := m.l.Acquire(g, nil, core.ClassMonitor); err != nil {
		panic(err)
	}
	m.l.SetHolderPC(pc)
}

// reenter adds a hold for the owner and publishes the count beyond the
// first (for detect.Dump, in every mode; see core.Lock.SetExtraHolds);
// re-entry is never an order edge. It and acquired are small enough to
// inline into the fast paths only because the Order-mode work is a call
// to an outlined function.
//
// Rejected alternative: publishing only in Order mode, as a delta. A
// Monitor re-entered before Order mode was turned on, or released while
// it was off, then shows a wrong count; only the holder knows the count,
// so it publishes it whatever the mode. The fast paths (first entry, last
// release) never store it: it is 0 there.
func (m *Monitor) reenter() {
	m.reentries++
	m.l.SetExtraHolds(m.reentries)
}

// acquired is the bookkeeping of a first entry; the hold count is already
// 1 (reentries is 0).
func (m *Monitor) acquired(g int64, try bool) {
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		m.orderAcquired(g, try, mw)
	}
}

//go:noinline
func (m *Monitor) orderAcquired(g int64, try bool, mw int32) {
	core.Acquired(&m.l, core.ClassMonitor, g, try, mw)
}

// TryLock tries to lock m and reports whether it succeeded. It succeeds
// for the owner, adding one to the hold count, and for anyone while m is
// free.
func (m *Monitor) TryLock() bool {
	g := gid.Get()
	if m.l.Owner() == g {
		m.reenter()
		return true
	}
	if !m.l.TryAcquire(g) {
		return false
	}
	m.l.SetHolderPC(core.SitePC(fpstack.CallerPC, 0))
	m.acquired(g, true)
	return true
}

// LockContext locks m, blocking until m is available or ctx is done.
// For the owner it adds one hold and returns nil at once, even if ctx is
// done (re-entry cannot block). Otherwise, on success it returns nil; on
// failure it returns ctx.Err() and leaves m not held by the caller. If ctx
// is already done, it fails even if m is free, as x/sync/semaphore does.
//
// With deadlock detection on, it returns a *detect.DeadlockError, without
// taking m, if waiting would close a deadlock cycle. It panics with an
// error matching ErrNilContext if ctx is nil, also for the owner.
func (m *Monitor) LockContext(ctx context.Context) error {
	g := gid.Get()
	if ctx == nil {
		panic(core.Misuse("monitor: LockContext with a nil context", ErrNilContext))
	}
	if m.l.Owner() == g {
		m.reenter()
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !m.l.FastAcquire(g) {
		if err := m.l.Acquire(g, ctx, core.ClassMonitor); err != nil {
			return err
		}
	}
	m.l.SetHolderPC(core.SitePC(fpstack.CallerPC, 0))
	m.acquired(g, false)
	return nil
}

// LockTimeout locks m, waiting at most d for it, and reports whether it
// did: Java's tryLock(timeout) and C#'s Monitor.TryEnter(obj, timeout).
// For the owner it adds one hold and returns true at once, whatever d.
// Otherwise, on false m is not held by the caller. If d <= 0, LockTimeout
// does not wait: it is TryLock.
//
// With deadlock detection on, LockTimeout returns false at once, without
// taking m, if waiting would close a deadlock cycle; the detector reports
// the cycle as it does for Lock (detect.WithReporter), and the caller
// backs off as it would after a timeout.
//
// The uncontended call allocates nothing; a call that has to park makes
// one timer.
func (m *Monitor) LockTimeout(d time.Duration) bool {
	g := gid.Get()
	if m.l.Owner() == g {
		m.reenter()
		return true
	}
	if !m.l.FastAcquire(g) && !m.lockTimeoutSlow(g, d) {
		return false
	}
	m.l.SetHolderPC(core.SitePC(fpstack.CallerPC, 0))
	m.acquired(g, d <= 0) // a wait of zero cannot block: no order edge
	return true
}

func (m *Monitor) lockTimeoutSlow(g int64, d time.Duration) bool {
	if d <= 0 {
		return m.l.TryAcquire(g)
	}
	return m.l.AcquireDeadline(g, nil, time.Now().Add(d), core.ClassMonitor) == nil
}

// Unlock takes one hold away and releases m when none are left.
//
// It is a run-time error, reported by a panic matching ErrNotOwner, if the
// calling goroutine does not hold m; m is left unchanged. If the caller
// lost its holds in a Cond wait whose reacquire panicked (a deadlock, say),
// each of its next such Unlocks, one per hold lost, panics with an error
// that also matches that panic value, or returns quietly if the goroutine
// is exiting by runtime.Goexit (see condvar.Cond.Wait).
func (m *Monitor) Unlock() { unlock(m) }

// unlockGo is Unlock in Go; unlock is it or its assembly fast path, as
// for lockGo.
//
//lint:ignore U1000 fast_amd64.s jumps here; fast_go.go calls it where the assembly is not built
func unlockGo(m *Monitor) {
	g := gid.Get()
	if m.l.Owner() != g {
		m.unlockFailed(g)
		return
	}
	if m.reentries > 0 {
		m.reentries--
		m.l.SetExtraHolds(m.reentries)
		return
	}
	m.l.Release(g)
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		m.orderReleased(g, mw)
	}
}

// unlockHeld is where the assembly goes when its CompareAndSwap releasing
// the last hold failed: waiters are queued, or the caller is not the
// owner. After unlockGo's checks it goes straight to the slow release.
//
//lint:ignore U1000 only fast_amd64.s jumps here; unused where the assembly is not built
func unlockHeld(m *Monitor) {
	g := gid.Get()
	if m.l.Owner() != g {
		m.unlockFailed(g)
		return
	}
	if m.reentries > 0 {
		m.reentries--
		m.l.SetExtraHolds(m.reentries)
		return
	}
	m.l.ReleaseSlow(g)
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		m.orderReleased(g, mw)
	}
}

//go:noinline
//lint:ignore U1000 called only from unlockGo and unlockHeld, which the assembly reaches
func (m *Monitor) orderReleased(g int64, mw int32) { core.Released(&m.l, g, mw) }

// unlockFailed panics for an Unlock by g, which does not hold m; or, if a
// Cond wait of g lost its holds on m (see condvar.Cond.Wait), accounts for
// one of them: it returns quietly when g is exiting by runtime.Goexit and
// otherwise panics with the retake's panic value attached.
//
//lint:ignore U1000 called only from unlockGo and unlockHeld, which the assembly reaches
func (m *Monitor) unlockFailed(g int64) {
	if cause, quiet, ok := m.l.TakeLost(g); ok {
		if quiet {
			return
		}
		panic(core.LostError(fmt.Sprintf("monitor: unlock by goroutine %d of monitor its cond wait could not retake", g), cause))
	}
	panic(m.notOwner(g, "unlock"))
}

func (m *Monitor) notOwner(g int64, op string) error {
	if o := m.l.Owner(); o != 0 {
		return core.Misuse(fmt.Sprintf("monitor: %s by goroutine %d of monitor held by goroutine %d", op, g, o), ErrNotOwner)
	}
	return core.Misuse(fmt.Sprintf("monitor: %s of unlocked monitor (by goroutine %d)", op, g), ErrNotOwner)
}

// Do runs fn holding m and releases the hold when fn returns, also when fn
// panics (the panic then goes on), like Java's synchronized block and
// Ruby's Monitor#synchronize.
func (m *Monitor) Do(fn func()) {
	m.Lock()
	defer m.Unlock()
	fn()
}

// HoldCount returns the number of holds the calling goroutine has on m:
// 0 if it is not the owner.
func (m *Monitor) HoldCount() int {
	if m.l.Owner() != gid.Get() {
		return 0
	}
	return m.reentries + 1
}

// Owned reports whether the calling goroutine holds m.
func (m *Monitor) Owned() bool { return m.l.Owner() == gid.Get() }

// Locked reports whether m is held by any goroutine. The answer may be out
// of date by the time the caller looks at it.
func (m *Monitor) Locked() bool { return m.l.Owner() != 0 }

// NewCond returns a new condition variable bound to m. Waiting on it
// releases m completely and restores the hold count before returning.
func (m *Monitor) NewCond() *condvar.Cond { return condvar.New(m) }

// implicit returns m's own condition, creating it on first use. The caller
// has checked that it holds m, so m guards the field.
func (m *Monitor) implicit(op string) *condvar.Cond {
	if g := gid.Get(); m.l.Owner() != g {
		panic(m.notOwner(g, op))
	}
	if m.cond == nil {
		m.cond = condvar.New(m)
	}
	return m.cond
}

// Wait waits on m's implicit condition, like Java's Object.wait: it
// releases m completely, waits for Notify or NotifyAll, and retakes m with
// the same hold count. It panics with ErrNotOwner if the caller does not
// hold m. See condvar.Cond.Wait.
func (m *Monitor) Wait() { m.implicit("wait").Wait() }

// WaitTimeout is Wait with a time limit; it reports whether it was
// notified (true) or timed out (false). See condvar.Cond.WaitTimeout.
func (m *Monitor) WaitTimeout(d time.Duration) bool { return m.implicit("wait").WaitTimeout(d) }

// WaitContext is Wait until ctx is done; it returns nil if notified, else
// ctx.Err(). It panics with an error matching ErrNilContext if ctx is nil.
// See condvar.Cond.WaitContext.
func (m *Monitor) WaitContext(ctx context.Context) error {
	return m.implicit("wait").WaitContext(ctx)
}

// Notify wakes the goroutine that has waited longest on m's implicit
// condition (Java's notify). It panics with ErrNotOwner if the caller does
// not hold m.
func (m *Monitor) Notify() { m.implicit("notify").Signal() }

// NotifyAll wakes every goroutine waiting on m's implicit condition
// (Java's notifyAll). It panics with ErrNotOwner if the caller does not
// hold m.
func (m *Monitor) NotifyAll() { m.implicit("notify").Broadcast() }

// condLocker lets condvar release every hold of m around a wait.
type condLocker struct{ m *Monitor }

func (c condLocker) Owned() bool { return c.m.Owned() }

func (c condLocker) ReleaseAll() int {
	n := c.m.reentries + 1
	c.m.reentries = 0
	if n > 1 {
		c.m.l.SetExtraHolds(0)
	}
	c.m.Unlock()
	return n
}

// Restore retakes m and sets the hold count back to n. If the retake
// panics (deadlock detection refuses it, or a LockOrder reporter panics or
// exits the goroutine), the caller holds nothing of m, and the n lost
// holds are recorded for unlockFailed before the panic goes on.
func (c condLocker) Restore(n int) {
	core.RetakeForCond(&c.m.l, core.ClassMonitor, gid.Get(), n, c.m.Lock)
	c.m.reentries = n - 1
	if n > 1 {
		c.m.l.SetExtraHolds(n - 1)
	}
}

type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
