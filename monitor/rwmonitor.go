package monitor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/fpstack"
	"github.com/locksmith-go/locksmith/internal/gid"
)

// ErrUpgrade is matched (with errors.Is) by the panic value of Lock,
// LockContext and LockTimeout called by a goroutine that holds an
// RWMonitor only for reading. Java's ReentrantReadWriteLock blocks forever there (the writer
// would wait for its own read lock); an RWMonitor refuses at once.
var ErrUpgrade = errors.New("deadlock; read-to-write upgrade")

// An RWMonitor is a reentrant reader/writer lock with hold counts: Java's
// ReentrantReadWriteLock, with the upgrade deadlock refused instead of
// hung. The zero value for an RWMonitor is an unlocked monitor.
//
// An RWMonitor must not be copied after first use.
//
// In the terminology of the Go memory model, the Unlock that releases the
// write lock (write hold count back to zero) “synchronizes before” the
// next first Lock or first RLock of another goroutine, and the RUnlock
// that releases a goroutine's last read hold “synchronizes before” the
// next first Lock. Re-entry synchronizes with nothing.
//
// The write lock is associated with the goroutine that locked it, and
// each read hold with the goroutine that took it:
//   - The writer may Lock again (counted) and may RLock (counted
//     separately). Lock, RLock, Unlock leaves it a reader: a downgrade.
//   - A reader may RLock again, also while a writer waits: re-entrant
//     readers pass, first-time readers queue behind the writer, so that
//     code that read-locks in a function called with the read lock held
//     cannot deadlock with a writer as it does with sync.RWMutex.
//   - Lock by a goroutine that holds only read locks panics at once with
//     an error matching ErrUpgrade: it would wait for itself. Release the
//     read locks and lock again (rechecking the state), or take the write
//     lock first and downgrade.
//   - Unlock by a goroutine that does not hold the write lock, and RUnlock
//     by one that holds no read lock, panic with ErrNotOwner and change
//     nothing.
//
// Writers are preferred and queue in FIFO order as with mutex.RWMutex.
// Inside a testing/synctest bubble waiting goroutines are durably blocked
// when the goroutines that can end their wait are of their bubble; an
// RWMonitor may be shared across bubbles without the runtime killing the
// program, with waits that are then not durable (as with mutex.RWMutex and
// docs/synctest.md). Re-entry in either mode costs no atomic write.
// NewCond returns conditions bound to the write lock; a condvar.Cond of
// RLocker is bound to the read lock.
type RWMonitor struct {
	_      noCopy
	l      core.RWLock
	wholds int // write holds; written and read only by the writer
}

var _ sync.Locker = (*RWMonitor)(nil)

func init() {
	core.RegisterAdapter(func(l sync.Locker) (core.Adapter, bool) {
		switch rw := l.(type) {
		case *RWMonitor:
			return core.Adapter{Lock: rw.l.WriterLock(), Class: core.ClassRWMonitor, Cond: rwCondLocker{rw}}, true
		case rlocker:
			return core.Adapter{Lock: rw.rw.l.WriterLock(), Class: core.ClassRWMonitor, Cond: core.ReadCond[readHost]{H: readHost(rw)}}, true
		}
		return core.Adapter{}, false
	})
}

// Lock locks rw for writing. If the calling goroutine holds the write
// lock, Lock adds one to the write hold count and returns at once;
// otherwise it blocks until no other goroutine holds rw in either mode.
//
// Lock panics with an error matching ErrUpgrade if the calling goroutine
// holds rw only for reading. With deadlock detection on, it panics with a
// *detect.DeadlockError, without the lock, if waiting would close a cycle
// of goroutines each waiting for a lock the next holds.
func (rw *RWMonitor) Lock() { rwLock(rw) }

// rwLockGo is Lock in Go. rwLock is either rwLockGo itself or, on amd64,
// an assembly fast path (rwfast_amd64.s) that does a re-entry or what
// LockFast does, and jumps to rwLockGo, rwLockHeld or rwLockReaders for
// everything else.
//
//lint:ignore U1000 rwfast_amd64.s jumps here; rwfast_go.go calls it where the assembly is not built
//go:noinline
func rwLockGo(rw *RWMonitor) {
	g := gid.Get()
	if rw.l.Writer() == g {
		rw.reenter(g)
		return
	}
	if rw.l.LockFast(g) {
		rw.l.SetWriterPC(core.SitePC(fpstack.CallerPC, entrySkip))
	} else {
		rw.lockSlow(g)
		rw.l.SetWriterPC(fpstack.CallerPC(entrySkip))
	}
	rw.wholds = 1
	rw.acquired(g, false)
}

// rwLockHeld is where the assembly goes when another goroutine holds the
// writer lock, or writers are queued: straight to the slow path.
//
// rwLockGo, rwLockHeld and rwLockReaders are reached by a jump from the
// assembly, through their ABI wrappers (entrySkip frames), or by a call
// from Lock inlined into its caller, so the return PC above those is the
// caller's site, which a first entry records as the writer's
// (core.RWLock.SetWriterPC).
//
//lint:ignore U1000 only rwfast_amd64.s jumps here; unused where the assembly is not built
//go:noinline
func rwLockHeld(rw *RWMonitor) {
	g := gid.Get()
	rw.lockSlow(g)
	rw.l.SetWriterPC(fpstack.CallerPC(entrySkip))
	rw.wholds = 1
	rw.acquired(g, false)
}

// rwLockReaders is where the assembly goes when it took the writer lock
// but found readers in: it lets the writer lock go again, as LockFast
// does, and takes the slow path, which checks for an upgrade and waits.
//
//lint:ignore U1000 only rwfast_amd64.s jumps here; unused where the assembly is not built
//go:noinline
func rwLockReaders(rw *RWMonitor) {
	g := gid.Get()
	rw.l.Unlock(g)
	rw.lockSlow(g)
	rw.l.SetWriterPC(fpstack.CallerPC(entrySkip))
	rw.wholds = 1
	rw.acquired(g, false)
}

//lint:ignore U1000 called only from rwLockGo, rwLockHeld and rwLockReaders, which the assembly reaches
func (rw *RWMonitor) lockSlow(g int64) {
	rw.checkUpgrade(g)
	if err := rw.l.Lock(g, nil, core.ClassRWMonitor); err != nil {
		panic(err)
	}
}

func (rw *RWMonitor) checkUpgrade(g int64) {
	if n := rw.l.HoldsRead(g); n > 0 {
		panic(core.Contract(core.Misuse(fmt.Sprintf("monitor: deadlock; read-to-write upgrade: lock by goroutine %d, which holds %d read hold(s) of the rwmonitor", g, n), ErrUpgrade)))
	}
}

func (rw *RWMonitor) reenter(g int64) {
	rw.wholds++
	rw.l.WriterLock().SetExtraHolds(rw.wholds - 1) // for detect.Dump; see Monitor.reenter
}

// acquired is the Order-mode bookkeeping of a first write entry, made
// after the hold count is set (wholds = 1). The callers set the count,
// and orderLocked takes an argument fewer than orderAcquired, so that
// acquired, which passes the mode word on, stays within the inliner's
// budget (cost 80).
func (rw *RWMonitor) acquired(g int64, try bool) {
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderLocked(g, try, mw)
	}
}

//go:noinline
func (rw *RWMonitor) orderLocked(g int64, try bool, mw int32) {
	core.AcquiredRW(rw.l.WriterLock(), core.ClassRWMonitor, g, try, false, mw)
}

//go:noinline
func (rw *RWMonitor) orderAcquired(g int64, try, read bool, mw int32) {
	core.AcquiredRW(rw.l.WriterLock(), core.ClassRWMonitor, g, try, read, mw)
}

//go:noinline
//lint:ignore U1000 called only from rwRUnlockGo, rwUnlockGo and rwUnlockHeld, which the assembly reaches
func (rw *RWMonitor) orderReleased(g int64, read bool, mw int32) {
	core.ReleasedRW(rw.l.WriterLock(), g, read, mw)
}

// TryLock tries to lock rw for writing and reports whether it succeeded.
// It succeeds for the writer (adding a hold), and for anyone else while
// nobody holds rw in either mode; it fails for a goroutine that holds rw
// only for reading.
func (rw *RWMonitor) TryLock() bool {
	g := gid.Get()
	if rw.l.Writer() == g {
		rw.reenter(g)
		return true
	}
	if !rw.l.TryLock(g) { // fails for a reader: it sees itself
		return false
	}
	rw.l.SetWriterPC(core.SitePC(fpstack.CallerPC, 0))
	rw.wholds = 1
	rw.acquired(g, true)
	return true
}

// LockContext locks rw for writing, blocking until it is available or ctx
// is done. For the writer it adds a hold and returns nil at once, even if
// ctx is done. Otherwise, on success it returns nil; on failure it returns
// ctx.Err() and leaves rw not held by the caller. If ctx is already done,
// it fails even if rw is free. Like Lock, it panics with an error matching
// ErrUpgrade if the caller holds rw only for reading, and with one
// matching ErrNilContext if ctx is nil, also for the writer; with deadlock
// detection on it returns a *detect.DeadlockError if waiting would close a
// deadlock cycle.
func (rw *RWMonitor) LockContext(ctx context.Context) error {
	g := gid.Get()
	if ctx == nil {
		panic(core.Misuse("monitor: LockContext of rwmonitor with a nil context", ErrNilContext))
	}
	if rw.l.Writer() == g {
		rw.reenter(g)
		return nil
	}
	rw.checkUpgrade(g)
	if err := ctx.Err(); err != nil {
		return err
	}
	if !rw.l.LockFast(g) {
		if err := rw.l.Lock(g, ctx, core.ClassRWMonitor); err != nil {
			return err
		}
	}
	rw.l.SetWriterPC(core.SitePC(fpstack.CallerPC, 0))
	rw.wholds = 1
	rw.acquired(g, false)
	return nil
}

// LockTimeout locks rw for writing, waiting at most d for it, and reports
// whether it did: Java's writeLock().tryLock(timeout) and C#'s
// ReaderWriterLockSlim.TryEnterWriteLock(timeout). For the writer it adds
// one hold and returns true at once, whatever d. Otherwise, on false rw is
// not held by the caller (readers that queued behind the abandoned
// attempt are let in). If d <= 0, LockTimeout does not wait: it is
// TryLock, except that a reader's call panics as below.
//
// With deadlock detection on, LockTimeout returns false at once, without
// the lock, if waiting would close a deadlock cycle; the detector reports
// the cycle as it does for Lock (detect.WithReporter), and the caller
// backs off as it would after a timeout. Like Lock, it panics with an
// error matching ErrUpgrade if the caller holds rw only for reading.
//
// The uncontended call allocates nothing; a call that has to park (for
// the writer before it, then for the readers to leave) makes one timer.
func (rw *RWMonitor) LockTimeout(d time.Duration) bool {
	g := gid.Get()
	if rw.l.Writer() == g {
		rw.reenter(g)
		return true
	}
	if !rw.l.LockFast(g) && !rw.lockTimeoutSlow(g, d) {
		return false
	}
	rw.l.SetWriterPC(core.SitePC(fpstack.CallerPC, 0))
	rw.wholds = 1
	rw.acquired(g, d <= 0) // a wait of zero cannot block: no order edge
	return true
}

func (rw *RWMonitor) lockTimeoutSlow(g int64, d time.Duration) bool {
	rw.checkUpgrade(g) // a broken contract, however short the wait
	if d <= 0 {
		return rw.l.TryLock(g)
	}
	return rw.l.LockDeadline(g, nil, time.Now().Add(d), core.ClassRWMonitor) == nil
}

// Unlock takes one write hold away and releases the write lock when none
// are left; read holds the caller took while writing stay.
//
// It is a run-time error, reported by a panic matching ErrNotOwner, if the
// calling goroutine does not hold rw for writing; rw is left unchanged.
func (rw *RWMonitor) Unlock() { rwUnlock(rw) }

// rwUnlockHeld is where the assembly goes when the caller, the writer
// with one write hold, saw no reader queued and its CompareAndSwap from
// its ID to 0 failed: writers are queued.
//
//lint:ignore U1000 only rwfast_amd64.s jumps here; unused where the assembly is not built
func rwUnlockHeld(rw *RWMonitor) {
	g := gid.Get()
	rw.wholds = 0
	if !rw.l.UnlockHeld(g) {
		rw.unlockFailed(g)
		return
	}
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderReleased(g, false, mw)
	}
}

// rwUnlockWake is where the assembly goes when, having released the
// write lock, it sees that a reader queued meanwhile: it wakes the queue.
//
//lint:ignore U1000 only rwfast_amd64.s jumps here; unused where the assembly is not built
func rwUnlockWake(rw *RWMonitor) { rw.l.WakeQueuedReaders() }

// rwUnlockGo is Unlock in Go; rwUnlock is it or its assembly fast path.
//
//lint:ignore U1000 rwfast_amd64.s jumps here; rwfast_go.go calls it where the assembly is not built
func rwUnlockGo(rw *RWMonitor) {
	g := gid.Get()
	if rw.l.Writer() != g {
		rw.unlockFailed(g)
		return
	}
	if rw.wholds--; rw.wholds > 0 {
		rw.l.WriterLock().SetExtraHolds(rw.wholds - 1)
		return
	}
	rw.l.Unlock(g)
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderReleased(g, false, mw)
	}
}

// lostHold accounts for a hold that a Cond wait of g could not retake
// (see condvar.Cond.Wait), if there is one: it returns quietly when g is
// exiting by runtime.Goexit and otherwise panics with the retake's panic
// value attached. It returns false if g lost nothing.
//
//lint:ignore U1000 called only from runlockFailed and unlockFailed, which the assembly reaches
func (rw *RWMonitor) lostHold(g int64, op string) bool {
	cause, quiet, ok := rw.l.WriterLock().TakeLost(g)
	if !ok {
		return false
	}
	if !quiet {
		panic(core.LostError(fmt.Sprintf("monitor: %s by goroutine %d of rwmonitor its cond wait could not retake", op, g), cause))
	}
	return true
}

//lint:ignore U1000 called only from rwUnlockGo and rwUnlockHeld, which the assembly reaches
func (rw *RWMonitor) unlockFailed(g int64) {
	if rw.lostHold(g, "unlock") {
		return
	}
	switch o := rw.l.Writer(); {
	case rw.l.HoldsRead(g) > 0:
		panic(core.Misuse(fmt.Sprintf("monitor: unlock by goroutine %d of rwmonitor it holds only for reading (use RUnlock)", g), ErrNotOwner))
	case o != 0:
		panic(core.Misuse(fmt.Sprintf("monitor: unlock by goroutine %d of rwmonitor write-locked by goroutine %d", g, o), ErrNotOwner))
	}
	panic(core.Misuse(fmt.Sprintf("monitor: unlock of rwmonitor not write-locked (by goroutine %d)", g), ErrNotOwner))
}

// RLock locks rw for reading. A goroutine that already holds a read lock
// adds a hold and never waits, even while a writer waits; so does the
// writer. Any other goroutine blocks while a writer holds rw or waits for
// readers to leave.
//
// With deadlock detection on, RLock panics with a *detect.DeadlockError,
// without the lock, if waiting would close a deadlock cycle.
func (rw *RWMonitor) RLock() { rwRLock(rw) }

// rwRLockGo is RLock in Go; rwRLock is it or its assembly fast path,
// which does a re-entry or what RLockFast does, and jumps to rwRLockGo
// (having changed nothing) or rwRLockRetreat for everything else.
//
//lint:ignore U1000 rwfast_amd64.s jumps here; rwfast_go.go calls it where the assembly is not built
//go:noinline
func rwRLockGo(rw *RWMonitor) {
	g := gid.Get()
	switch {
	case rw.l.ReenterRead(g):
	case rw.l.RLockFast(g, true):
		rw.l.SetReaderPC(g, core.SitePC(fpstack.CallerPC, entrySkip))
	case rw.rlockSlow(g):
		rw.l.SetReaderPC(g, fpstack.CallerPC(entrySkip))
	}
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderAcquired(g, false, true, mw)
	}
}

// rwRLockRetreat is where the assembly goes when, having claimed the
// caller's home slot, it sees that a writer came in meanwhile: it gives
// the slot back and takes the slow path.
//
//lint:ignore U1000 only rwfast_amd64.s jumps here; unused where the assembly is not built
//go:noinline
func rwRLockRetreat(rw *RWMonitor) {
	g := gid.Get()
	rw.l.RetreatRead(g)
	if rw.rlockSlow(g) {
		rw.l.SetReaderPC(g, fpstack.CallerPC(entrySkip))
	}
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderAcquired(g, false, true, mw)
	}
}

// rlockSlow takes a read hold that neither fast path could: a first
// read that must wait, or a hold outside the home slot. It reports
// whether the hold is a first-time read (not a re-entry).
//
//lint:ignore U1000 called only from rwRLockGo and rwRLockRetreat, which the assembly reaches
func (rw *RWMonitor) rlockSlow(g int64) (first bool) {
	if rw.l.HoldsRead(g) > 0 {
		rw.l.AddReadHolds(g, 1)
		return false
	}
	if err := rw.l.RLockSlow(g, nil, core.ClassRWMonitor); err != nil {
		panic(err)
	}
	return true
}

// TryRLock tries to lock rw for reading and reports whether it succeeded.
// It succeeds for any holder (adding a read hold), and for anyone else
// unless a writer holds rw or waits for readers to leave.
func (rw *RWMonitor) TryRLock() bool {
	g := gid.Get()
	switch {
	case rw.l.HoldsRead(g) > 0:
		rw.l.AddReadHolds(g, 1)
	case !rw.l.TryRLock(g, true): // succeeds for the writer
		return false
	default:
		rw.l.SetReaderPC(g, core.SitePC(fpstack.CallerPC, 0))
	}
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderAcquired(g, true, true, mw)
	}
	return true
}

// RLockContext locks rw for reading, blocking until it is available or
// ctx is done. For a holder (reader or writer) it adds a read hold and
// returns nil at once, even if ctx is done. Otherwise, on success it
// returns nil; on failure it returns ctx.Err() and leaves rw not held by
// the caller. If ctx is already done, it fails even if rw is free. With
// deadlock detection on, it returns a *detect.DeadlockError if waiting
// would close a deadlock cycle. It panics with an error matching
// ErrNilContext if ctx is nil, also for a holder.
func (rw *RWMonitor) RLockContext(ctx context.Context) error {
	g := gid.Get()
	if ctx == nil {
		panic(core.Misuse("monitor: RLockContext of rwmonitor with a nil context", ErrNilContext))
	}
	switch {
	case rw.l.HoldsRead(g) > 0:
		rw.l.AddReadHolds(g, 1)
	case rw.l.Writer() == g:
		if !rw.l.TryRLock(g, true) {
			panic("monitor: internal error: the writer could not take a read hold")
		}
		rw.l.SetReaderPC(g, core.SitePC(fpstack.CallerPC, 0))
	default:
		if err := ctx.Err(); err != nil {
			return err
		}
		if !rw.l.RLockFast(g, true) {
			if err := rw.l.RLockSlow(g, ctx, core.ClassRWMonitor); err != nil {
				return err
			}
		}
		rw.l.SetReaderPC(g, core.SitePC(fpstack.CallerPC, 0))
	}
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderAcquired(g, false, true, mw)
	}
	return nil
}

// RLockTimeout locks rw for reading, waiting at most d for it, and
// reports whether it did: Java's readLock().tryLock(timeout) and C#'s
// ReaderWriterLockSlim.TryEnterReadLock(timeout). For a holder (reader
// or writer) it adds a read hold and returns true at once, whatever d,
// also past queued writers. Otherwise, on false rw is not held by the
// caller. If d <= 0, RLockTimeout does not wait: it is TryRLock.
//
// With deadlock detection on, RLockTimeout returns false at once, without
// the lock, if waiting would close a deadlock cycle, as LockTimeout does.
//
// The uncontended call allocates nothing; a call that has to park makes
// one timer.
func (rw *RWMonitor) RLockTimeout(d time.Duration) bool {
	g := gid.Get()
	if !rw.l.ReenterRead(g) && !rw.l.RLockFast(g, true) && !rw.rlockTimeoutSlow(g, d) {
		return false
	}
	if rw.l.HoldsRead(g) == 1 { // a first-time read, not a re-entry
		rw.l.SetReaderPC(g, core.SitePC(fpstack.CallerPC, 0))
	}
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderAcquired(g, d <= 0, true, mw)
	}
	return true
}

// rlockTimeoutSlow takes a read hold that neither fast path could, as
// rlockSlow does, waiting at most d.
func (rw *RWMonitor) rlockTimeoutSlow(g int64, d time.Duration) bool {
	if rw.l.HoldsRead(g) > 0 {
		rw.l.AddReadHolds(g, 1)
		return true
	}
	if d <= 0 {
		return rw.l.TryRLock(g, true)
	}
	return rw.l.RLockDeadline(g, nil, time.Now().Add(d), core.ClassRWMonitor) == nil
}

// RUnlock takes one read hold away and releases the caller's read lock
// when none are left.
//
// It is a run-time error, reported by a panic matching ErrNotOwner, if the
// calling goroutine holds no read lock of rw; rw is left unchanged.
func (rw *RWMonitor) RUnlock() { rwRUnlock(rw) }

// rwRUnlockGo is RUnlock in Go; rwRUnlock is it or its assembly fast
// path, which does what RUnlockFast does and jumps to rwRUnlockGo (having
// changed nothing) or rwRUnlockWake for everything else.
//
//lint:ignore U1000 rwfast_amd64.s jumps here; rwfast_go.go calls it where the assembly is not built
func rwRUnlockGo(rw *RWMonitor) {
	g := gid.Get()
	if r := rw.l.RUnlockFast(g); r != core.RUnlocked {
		rw.runlockSlow(g, r)
	}
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderReleased(g, true, mw)
	}
}

// rwRUnlockWake is where the assembly goes when it released the caller's
// read lock and saw a writer waiting for the readers to leave.
//
//lint:ignore U1000 only rwfast_amd64.s jumps here; unused where the assembly is not built
func rwRUnlockWake(rw *RWMonitor) { rw.l.WakeDrainer() }

// runlockSlow finishes an RUnlock that the inlined fast path did not.
//
//lint:ignore U1000 called only from rwRUnlockGo, which the assembly reaches
func (rw *RWMonitor) runlockSlow(g int64, r int) {
	switch {
	case r == core.RUnlockedWake:
		rw.l.WakeDrainer()
	case !rw.l.RUnlock(g, false):
		rw.runlockFailed(g)
	}
}

//lint:ignore U1000 called only from runlockSlow, which the assembly reaches
func (rw *RWMonitor) runlockFailed(g int64) {
	if rw.lostHold(g, "runlock") {
		return
	}
	if rw.l.Writer() == g {
		panic(core.Misuse(fmt.Sprintf("monitor: runlock by goroutine %d of rwmonitor it holds only for writing (use Unlock)", g), ErrNotOwner))
	}
	panic(core.Misuse(fmt.Sprintf("monitor: runlock by goroutine %d, which holds no read lock of the rwmonitor (%d readers)", g, rw.l.Readers()), ErrNotOwner))
}

// WriteHoldCount returns the number of write holds the calling goroutine
// has on rw: 0 if it is not the writer.
func (rw *RWMonitor) WriteHoldCount() int {
	if rw.l.Writer() != gid.Get() {
		return 0
	}
	return rw.wholds
}

// ReadHoldCount returns the number of read holds the calling goroutine
// has on rw.
func (rw *RWMonitor) ReadHoldCount() int { return rw.l.HoldsRead(gid.Get()) }

// Owned reports whether the calling goroutine holds rw for writing.
func (rw *RWMonitor) Owned() bool { return rw.l.Writer() == gid.Get() }

// ReadOwned reports whether the calling goroutine holds rw for reading.
func (rw *RWMonitor) ReadOwned() bool { return rw.l.HoldsRead(gid.Get()) > 0 }

// Locked reports whether a goroutine holds rw for writing. The answer may
// be out of date by the time the caller looks at it.
func (rw *RWMonitor) Locked() bool { return rw.l.WriteLocked() }

// Readers returns the number of goroutines holding rw for reading (each
// counted once, whatever its hold count).
func (rw *RWMonitor) Readers() int { return rw.l.Readers() }

// RLocker returns a sync.Locker that implements Lock and Unlock by calling
// rw.RLock and rw.RUnlock. A condvar.Cond bound to it works as a
// sync.Cond on sync.RWMutex's RLocker does: a wait requires a read hold,
// releases every read hold of the caller and restores the count before
// returning. The writer may not wait on such a Cond: the wait would keep
// the write lock, which shuts out every goroutine that could signal, so
// it panics with an error matching condvar.ErrReadLocker.
func (rw *RWMonitor) RLocker() sync.Locker { return rlocker{rw} }

type rlocker struct{ rw *RWMonitor }

func (r rlocker) Lock()   { r.rw.RLock() }
func (r rlocker) Unlock() { r.rw.RUnlock() }

// NewCond returns a new condition variable bound to rw's write lock.
// Waiting on it requires the write lock; it releases every write and read
// hold of the caller and restores both counts before returning, also when
// it returns by timeout or cancellation.
func (rw *RWMonitor) NewCond() *condvar.Cond { return condvar.New(rw) }

// rwCondLocker lets condvar release every hold of rw around a wait. The
// count it returns packs both: write holds in the low half of an int,
// read holds in the high half.
type rwCondLocker struct{ rw *RWMonitor }

// condShift is half the width of int: 32 on 64-bit platforms.
const condShift = 16 << (^uint(0) >> 63)

func (c rwCondLocker) Owned() bool { return c.rw.Owned() }

func (c rwCondLocker) ReleaseAll() int {
	rw := c.rw
	g := gid.Get()
	reads := rw.l.HoldsRead(g)
	if reads > 0 {
		rw.l.RUnlock(g, true)
	}
	n := rw.wholds
	rw.wholds = 1
	rw.l.WriterLock().SetExtraHolds(0)
	rw.Unlock()
	return n | reads<<condShift
}

// Restore retakes the write lock and the read hold, and sets both counts
// back. If the retake panics (deadlock detection refuses it, or a
// LockOrder reporter panics or exits the goroutine), every hold is
// recorded as lost, for the failed Unlocks and RUnlocks that follow,
// before the panic goes on.
func (c rwCondLocker) Restore(n int) {
	rw := c.rw
	writes, reads := n&(1<<condShift-1), n>>condShift
	g := gid.Get()
	core.RetakeForCond(rw.l.WriterLock(), core.ClassRWMonitor, g, writes+reads, rw.Lock)
	rw.wholds = writes
	rw.l.WriterLock().SetExtraHolds(writes - 1)
	if reads > 0 {
		if !rw.l.TryRLock(g, true) { // the writer's read hold cannot wait
			panic("monitor: internal error: the writer could not take a read hold")
		}
		rw.l.AddReadHolds(g, reads-1)
	}
}
