package mutex

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	// detect installs the deadlock detector that Lock consults before
	// parking (Cycles mode is the default); the import makes sure it is
	// linked into every program that uses a Mutex.
	_ "github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/fpstack"
	"github.com/locksmith-go/locksmith/internal/gid"
	"github.com/locksmith-go/locksmith/misuse"
)

// ErrRecursiveLock is matched (with errors.Is) by the panic value of Lock
// and LockContext called by the goroutine that already holds the Mutex.
var ErrRecursiveLock = errors.New("deadlock; recursive locking")

// ErrNotOwner is matched (with errors.Is) by the panic value of Unlock
// called by a goroutine that does not hold the Mutex, or on an unlocked
// Mutex. It is the same value as monitor.ErrNotOwner and
// condvar.ErrNotOwner.
var ErrNotOwner = misuse.ErrNotOwner

// ErrNilContext is matched (with errors.Is) by the panic value of
// LockContext called with a nil context. It is the same value as
// monitor.ErrNilContext and condvar.ErrNilContext.
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
// monitor.ErrStranded.
var ErrStranded = misuse.ErrStranded

// A Mutex is a mutual exclusion lock that records its owner.
// The zero value for a Mutex is an unlocked mutex.
//
// A Mutex must not be copied after first use.
//
// In the terminology of the Go memory model, the n'th call to Unlock
// “synchronizes before” the m'th call to Lock for any n < m. A successful
// call to TryLock, LockTimeout or LockContext is equivalent to a call to Lock.
//
// A locked Mutex is associated with the goroutine that locked it. Lock from
// that goroutine panics with ErrRecursiveLock; Unlock from any other
// goroutine panics with ErrNotOwner. Goroutines blocked in Lock park on a
// channel (a semaphore, in a synctest bubble where the wait cannot be
// durable) and show in the block profile. Inside a testing/synctest bubble
// a waiter is durably blocked when the holder and the other waiters are
// goroutines of its bubble; a Mutex shared with goroutines outside the
// bubble or in another one works (it never makes the runtime kill the
// program), but such a wait is not durable: see docs/synctest.md.
//
// Fairness is sync.Mutex's: waiters queue in FIFO order, but a goroutine
// that arrives while the mutex is free may take it ahead of a woken waiter,
// which then goes back to the front of the queue. A waiter that has lost
// that way for more than 1 ms switches the mutex to starvation mode, in
// which Unlock hands the mutex straight to the first waiter and newcomers
// queue, until the queue drains.
type Mutex struct {
	_ noCopy
	l core.Lock
}

var _ sync.Locker = (*Mutex)(nil)

func init() {
	core.RegisterAdapter(func(l sync.Locker) (core.Adapter, bool) {
		m, ok := l.(*Mutex)
		if !ok {
			return core.Adapter{}, false
		}
		return core.Adapter{Lock: &m.l, Class: core.ClassMutex, Cond: condLocker{m}}, true
	})
}

// Lock locks m. If m is already locked by another goroutine, Lock blocks
// until m is available.
//
// Lock panics with an error matching ErrRecursiveLock if the calling
// goroutine already holds m. Where fmt or text/template would recover
// that panic (a String method that locks m, formatted while m is held),
// deadlock detection also reports it first (detect.RecoveredMisuse).
// With deadlock detection on (package detect),
// it panics with a *detect.DeadlockError, without taking m, if waiting
// would close a cycle of goroutines each waiting for a lock the next holds.
func (m *Mutex) Lock() { lock(m) }

// lockGo is Lock in Go. lock is either lockGo itself or, on amd64, an
// assembly fast path (fast_amd64.s) that makes the same CompareAndSwap;
// it jumps to lockHeld when that fails (a held mutex, or waiters), and
// here for Order mode or no fast goroutine ID.
//
//lint:ignore U1000 fast_amd64.s jumps here; fast_go.go calls it where the assembly is not built
//go:noinline
func lockGo(m *Mutex) {
	g := gid.Get()
	if m.l.FastAcquire(g) {
		m.l.SetHolderPC(core.SitePC(fpstack.CallerPC, entrySkip))
	} else {
		m.lockSlow(g, fpstack.CallerPC(entrySkip))
	}
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		m.orderAcquired(g, false, mw)
	}
}

// lockHeld is where the assembly goes when its CompareAndSwap failed: the
// mutex is held or has waiters. It goes straight to the slow path, as
// lockGo does after its own CompareAndSwap fails; another attempt at once
// would only take the cache line from the holder again.
//
// lockGo and lockHeld are reached by a jump from the assembly, through
// their ABI wrappers (entrySkip frames), or by a call from Lock inlined
// into its caller, so the return PC above those is the caller's site,
// which they record as the holder's (core.Lock.SetHolderPC).
//
//lint:ignore U1000 only fast_amd64.s jumps here; unused where the assembly is not built
//go:noinline
func lockHeld(m *Mutex) {
	g := gid.Get()
	m.lockSlow(g, fpstack.CallerPC(entrySkip))
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		m.orderAcquired(g, false, mw)
	}
}

// lockSlow takes m for g, which asked for it at pc, after the fast path
// failed, and records pc as the holder's site.
//
//lint:ignore U1000 called only from lockGo and lockHeld, which the assembly reaches
func (m *Mutex) lockSlow(g int64, pc uintptr) {
	if m.l.Owner() == g {
		panic(recursive(g, m.l.HolderPC(), pc))
	}
	if err := m.l.Acquire(g, nil, core.ClassMutex); err != nil {
		panic(err)
	}
	m.l.SetHolderPC(pc)
}

// TryLock tries to lock m and reports whether it succeeded. It returns
// false while m is held by any goroutine, the caller included, as Ruby's
// Mutex#try_lock does.
func (m *Mutex) TryLock() bool {
	g := gid.Get()
	if !m.l.TryAcquire(g) {
		return false
	}
	m.l.SetHolderPC(core.SitePC(fpstack.CallerPC, 0))
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		m.orderAcquired(g, true, mw)
	}
	return true
}

// LockContext locks m, blocking until m is available or ctx is done.
// On success, it returns nil. On failure, it returns ctx.Err() and leaves m
// not held by the caller. If ctx is already done, LockContext fails even if
// m is free, as x/sync/semaphore's Acquire does.
//
// With deadlock detection on, it returns a *detect.DeadlockError, without
// taking m, if waiting would close a deadlock cycle, so that the caller can
// release what it holds and retry. Like Lock, it panics with an error
// matching ErrRecursiveLock if the caller already holds m, and with one
// matching ErrNilContext if ctx is nil.
func (m *Mutex) LockContext(ctx context.Context) error {
	g := gid.Get()
	if m.l.Owner() == g {
		panic(recursive(g, m.l.HolderPC(), fpstack.CallerPC(0))) // a broken contract, whatever the context says
	}
	if ctx == nil {
		panic(core.Misuse("mutex: LockContext with a nil context", ErrNilContext))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !m.l.FastAcquire(g) {
		if err := m.l.Acquire(g, ctx, core.ClassMutex); err != nil {
			return err
		}
	}
	m.l.SetHolderPC(core.SitePC(fpstack.CallerPC, 0))
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		m.orderAcquired(g, false, mw)
	}
	return nil
}

// LockTimeout locks m, waiting at most d for it, and reports whether it
// did: Java's tryLock(timeout) and C#'s Monitor.TryEnter(obj, timeout).
// On false, m is not held by the caller. If d <= 0, LockTimeout does not
// wait: it is TryLock, except that the holder's call panics as below.
//
// With deadlock detection on, LockTimeout returns false at once, without
// taking m, if waiting would close a deadlock cycle; the detector reports
// the cycle as it does for Lock (detect.WithReporter), and the caller
// backs off as it would after a timeout. Like Lock, it panics with an
// error matching ErrRecursiveLock if the caller already holds m.
//
// The uncontended call allocates nothing; a call that has to park makes
// one timer.
func (m *Mutex) LockTimeout(d time.Duration) bool {
	g := gid.Get()
	if !m.l.FastAcquire(g) && !m.lockTimeoutSlow(g, d, fpstack.CallerPC(0)) {
		return false
	}
	m.l.SetHolderPC(core.SitePC(fpstack.CallerPC, 0))
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		m.orderAcquired(g, d <= 0, mw) // a wait of zero cannot block: no order edge
	}
	return true
}

func (m *Mutex) lockTimeoutSlow(g int64, d time.Duration, pc uintptr) bool {
	if m.l.Owner() == g {
		panic(recursive(g, m.l.HolderPC(), pc)) // a broken contract, however short the wait
	}
	if d <= 0 {
		return m.l.TryAcquire(g)
	}
	return m.l.AcquireDeadline(g, nil, time.Now().Add(d), core.ClassMutex) == nil
}

// Unlock unlocks m.
//
// It is a run-time error, reported by a panic matching ErrNotOwner, if m is
// not locked or is locked by another goroutine; m is left unchanged, so its
// holder can still unlock it. Unlike sync.Mutex, a Mutex cannot be unlocked
// by a goroutine other than the one that locked it. If the caller lost its
// hold in a condvar.Cond wait whose reacquire panicked (a deadlock, say),
// its next such Unlock panics with an error that also matches that panic
// value, or returns quietly if the goroutine is exiting by runtime.Goexit
// (see condvar.Cond.Wait).
func (m *Mutex) Unlock() { unlock(m) }

// unlockGo is Unlock in Go; unlock is it or its assembly fast path, as
// for lockGo.
//
//lint:ignore U1000 fast_amd64.s jumps here; fast_go.go calls it where the assembly is not built
func unlockGo(m *Mutex) {
	g := gid.Get()
	if !m.l.Release(g) {
		m.unlockFailed(g)
		return
	}
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		m.orderReleased(g, mw)
	}
}

// unlockHeld is where the assembly goes when its CompareAndSwap failed:
// waiters are queued, or the caller is not the holder. It goes straight
// to the slow release, as unlockGo does after its own CompareAndSwap.
//
//lint:ignore U1000 only fast_amd64.s jumps here; unused where the assembly is not built
func unlockHeld(m *Mutex) {
	g := gid.Get()
	if !m.l.ReleaseSlow(g) {
		m.unlockFailed(g)
		return
	}
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		m.orderReleased(g, mw)
	}
}

// The Order-mode bookkeeping is outlined so that the fast paths stay
// small: inlined, the interface calls cost register spills on every
// Lock and Unlock even with Order mode off.

//go:noinline
func (m *Mutex) orderAcquired(g int64, try bool, mw int32) {
	core.Acquired(&m.l, core.ClassMutex, g, try, mw)
}

//go:noinline
//lint:ignore U1000 called only from unlockGo and unlockHeld, which the assembly reaches
func (m *Mutex) orderReleased(g int64, mw int32) { core.Released(&m.l, g, mw) }

// unlockFailed panics for an Unlock by g, which does not hold m; or, if a
// Cond wait of g lost its hold on m (see Cond.Wait), returns quietly when
// g is exiting by runtime.Goexit and otherwise panics with the retake's
// panic value attached.
//
//lint:ignore U1000 called only from unlockGo and unlockHeld, which the assembly reaches
func (m *Mutex) unlockFailed(g int64) {
	if cause, quiet, ok := m.l.TakeLost(g); ok {
		if quiet {
			return
		}
		panic(core.LostError(fmt.Sprintf("mutex: unlock by goroutine %d of mutex its cond wait could not retake", g), cause))
	}
	if o := m.l.Owner(); o != 0 {
		panic(core.Misuse(fmt.Sprintf("mutex: unlock by goroutine %d of mutex held by goroutine %d", g, o), ErrNotOwner))
	}
	panic(core.Misuse(fmt.Sprintf("mutex: unlock of unlocked mutex (by goroutine %d)", g), ErrNotOwner))
}

// Owned reports whether the calling goroutine holds m.
func (m *Mutex) Owned() bool { return m.l.Owner() == gid.Get() }

// Locked reports whether m is held by any goroutine. The answer may be out
// of date by the time the caller looks at it; use it for assertions and
// diagnostics, not for synchronization.
func (m *Mutex) Locked() bool { return m.l.Owner() != 0 }

func recursive(g int64, held, again uintptr) error {
	return core.Contract(core.Misuse(fmt.Sprintf("mutex: deadlock; recursive locking (goroutine %d)%s", g, core.Sites(held, again)), ErrRecursiveLock))
}

// condLocker lets condvar release and retake m around a wait.
type condLocker struct{ m *Mutex }

func (c condLocker) Owned() bool     { return c.m.Owned() }
func (c condLocker) ReleaseAll() int { c.m.Unlock(); return 1 }

// Restore retakes m (see core.RetakeForCond: a retake that panics
// records the lost hold for unlockFailed before the panic goes on).
func (c condLocker) Restore(int) {
	core.RetakeForCond(&c.m.l, core.ClassMutex, gid.Get(), 1, c.m.Lock)
}

// noCopy may be embedded into structs which must not be copied after first
// use; go vet's copylocks check reports copies.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
