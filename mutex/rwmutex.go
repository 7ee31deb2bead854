package mutex

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/fpstack"
	"github.com/locksmith-go/locksmith/internal/gid"
)

// An RWMutex is a reader/writer mutual exclusion lock that records its
// holders: any number of readers or a single writer. It has the methods of
// sync.RWMutex, so that changing the type of a field is enough to start
// checking a program's read-write locking.
// The zero value for an RWMutex is an unlocked mutex.
//
// An RWMutex must not be copied after first use.
//
// In the terminology of the Go memory model, the n'th call to Unlock
// “synchronizes before” the m'th call to Lock for any n < m, just as for
// Mutex. For any call to RLock, there exists an n such that the n'th call
// to Unlock “synchronizes before” that call to RLock, and the corresponding
// call to RUnlock “synchronizes before” the n+1'th call to Lock. A
// successful TryLock, LockContext or LockTimeout is equivalent to a Lock,
// a successful TryRLock, RLockContext or RLockTimeout to an RLock.
//
// An RWMutex is not reentrant, in either mode, and says so at once: any
// lock call (Lock, RLock and their Context and Timeout forms) by a
// goroutine that already holds the RWMutex, for reading or for writing,
// panics with an error matching ErrRecursiveLock, whether or not a writer
// is waiting. Its
// message names the case: "recursive read locking" (RLock by a reader, the
// deadlock that sync.RWMutex hits only when a writer arrives between the
// two RLocks), "read-to-write upgrade" (Lock by a reader, which would wait
// for itself forever), or "recursive locking" (any lock by the writer).
// TryLock and TryRLock by a holder return false. Unlock by a goroutine
// that does not hold the write lock, and RUnlock by one that holds no read
// lock, panic with ErrNotOwner and change nothing.
//
// As with sync.RWMutex, writers are preferred: while a writer holds the
// lock or waits for readers to leave, new readers queue (and TryRLock
// fails), so a writer is never starved; the readers queued behind a
// writer are let in when it unlocks, before the next writer. Writers queue
// among themselves in FIFO order with Mutex's starvation mode. Inside a
// testing/synctest bubble a waiting goroutine is durably blocked when the
// goroutines that can end its wait (the writer a reader waits for, the
// readers a writer waits for, the writers and readers queued) are of its
// bubble; an RWMutex shared with goroutines outside the bubble or in
// another one works (it never makes the runtime kill the program), but
// such a wait is not durable: see docs/synctest.md.
//
// The readers are recorded in a table of eight slots inside the RWMutex
// (a map beside it holds any beyond eight), so RLock and RUnlock allocate
// nothing and take no lock while at most eight goroutines read at once.
type RWMutex struct {
	_ noCopy
	l core.RWLock
}

var _ sync.Locker = (*RWMutex)(nil)

func init() {
	core.RegisterAdapter(func(l sync.Locker) (core.Adapter, bool) {
		switch rw := l.(type) {
		case *RWMutex:
			return core.Adapter{Lock: rw.l.WriterLock(), Class: core.ClassRWMutex, Cond: rwCondLocker{rw}}, true
		case rlocker:
			return core.Adapter{Lock: rw.rw.l.WriterLock(), Class: core.ClassRWMutex, Cond: core.ReadCond[readHost]{H: readHost(rw)}}, true
		}
		return core.Adapter{}, false
	})
}

// Lock locks rw for writing. If the lock is already held for reading or
// writing by another goroutine, Lock blocks until it is available.
//
// Lock panics with an error matching ErrRecursiveLock if the calling
// goroutine already holds rw, for writing ("recursive locking") or for
// reading ("read-to-write upgrade"). With deadlock detection on, it panics
// with a *detect.DeadlockError, without the lock, if waiting would close a
// cycle of goroutines each waiting for a lock the next holds.
func (rw *RWMutex) Lock() { rwLock(rw) }

// rwLockGo is Lock in Go. rwLock is either rwLockGo itself or, on amd64,
// an assembly fast path (rwfast_amd64.s) that does what LockFast does and
// jumps to rwLockGo, rwLockHeld or rwLockReaders for everything else.
//
//lint:ignore U1000 rwfast_amd64.s jumps here; rwfast_go.go calls it where the assembly is not built
//go:noinline
func rwLockGo(rw *RWMutex) {
	g := gid.Get()
	if rw.l.LockFast(g) {
		rw.l.SetWriterPC(core.SitePC(fpstack.CallerPC, entrySkip))
	} else {
		rw.lockSlow(g)
		rw.l.SetWriterPC(fpstack.CallerPC(entrySkip))
	}
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderAcquired(g, false, false, mw)
	}
}

// rwLockHeld is where the assembly goes when its CompareAndSwap of the
// writer lock failed: straight to the slow path, as rwLockGo after
// LockFast fails.
//
// rwLockGo, rwLockHeld and rwLockReaders are reached by a jump from the
// assembly, through their ABI wrappers (entrySkip frames), or by a call
// from Lock inlined into its caller, so the return PC above those is the
// caller's site, which they record as the writer's
// (core.RWLock.SetWriterPC).
//
//lint:ignore U1000 only rwfast_amd64.s jumps here; unused where the assembly is not built
//go:noinline
func rwLockHeld(rw *RWMutex) {
	g := gid.Get()
	rw.lockSlow(g)
	rw.l.SetWriterPC(fpstack.CallerPC(entrySkip))
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderAcquired(g, false, false, mw)
	}
}

// rwLockReaders is where the assembly goes when it took the writer lock
// but found readers in: it lets the writer lock go again, as LockFast
// does, and takes the slow path, which checks for an upgrade and waits.
//
//lint:ignore U1000 only rwfast_amd64.s jumps here; unused where the assembly is not built
//go:noinline
func rwLockReaders(rw *RWMutex) {
	g := gid.Get()
	rw.l.Unlock(g)
	rw.lockSlow(g)
	rw.l.SetWriterPC(fpstack.CallerPC(entrySkip))
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderAcquired(g, false, false, mw)
	}
}

//lint:ignore U1000 called only from rwLockGo, rwLockHeld and rwLockReaders, which the assembly reaches
func (rw *RWMutex) lockSlow(g int64) {
	rw.checkHolder(g, "lock")
	if err := rw.l.Lock(g, nil, core.ClassRWMutex); err != nil {
		panic(err)
	}
}

// writeLockedAt says where the writer took the lock, for a recursive
// locking panic, whose stack says where it asked again: ", write-locked
// at f:1", or nothing where that is not recorded.
func writeLockedAt(pc uintptr) string {
	if s := core.PCSite(pc); s != "" {
		return ", write-locked at " + s
	}
	return ""
}

// checkHolder panics if g holds rw in either mode.
func (rw *RWMutex) checkHolder(g int64, op string) {
	switch {
	case rw.l.Writer() == g:
		panic(core.Contract(core.Misuse(fmt.Sprintf("mutex: deadlock; recursive locking: %s of rwmutex write-locked by the same goroutine %d%s", op, g, writeLockedAt(rw.l.WriterPC())), ErrRecursiveLock)))
	case rw.l.HoldsRead(g) > 0 && op == "rlock":
		panic(core.Contract(core.Misuse(fmt.Sprintf("mutex: deadlock; recursive read locking: rlock of rwmutex read-locked by the same goroutine %d%s", g, rw.readLockedAt(g)), ErrRecursiveLock)))
	case rw.l.HoldsRead(g) > 0:
		panic(core.Contract(core.Misuse(fmt.Sprintf("mutex: deadlock; read-to-write upgrade: %s of rwmutex read-locked by the same goroutine %d%s", op, g, rw.readLockedAt(g)), ErrRecursiveLock)))
	}
}

// readLockedAt says where g, a reader, took its read hold, for a
// recursive read locking or upgrade panic, whose stack says where it
// asked again: ", read-locked at f:1", or, where no user frame was
// recorded (a read lock taken through an interface such as RLocker's, or
// on a fast path of a build without frame pointers), that it was not.
func (rw *RWMutex) readLockedAt(g int64) string {
	if s := core.PCSite(rw.l.ReaderPC(g)); s != "" {
		return ", read-locked at " + s
	}
	return ", first rlock site not recorded"
}

// TryLock tries to lock rw for writing and reports whether it succeeded.
// It returns false while anyone holds rw in either mode, the caller
// included.
func (rw *RWMutex) TryLock() bool {
	g := gid.Get()
	if !rw.l.TryLock(g) {
		return false
	}
	rw.l.SetWriterPC(core.SitePC(fpstack.CallerPC, 0))
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderAcquired(g, true, false, mw)
	}
	return true
}

// LockContext locks rw for writing, blocking until it is available or ctx
// is done. On success, it returns nil. On failure, it returns ctx.Err() and
// leaves rw not held by the caller (readers that queued behind the
// abandoned attempt are let in). If ctx is already done, LockContext fails
// even if rw is free.
//
// With deadlock detection on, it returns a *detect.DeadlockError, without
// the lock, if waiting would close a deadlock cycle. Like Lock, it panics
// with an error matching ErrRecursiveLock if the caller already holds rw,
// and with one matching ErrNilContext if ctx is nil.
func (rw *RWMutex) LockContext(ctx context.Context) error {
	g := gid.Get()
	rw.checkHolder(g, "lock") // a broken contract, whatever the context says
	if ctx == nil {
		panic(core.Misuse("mutex: LockContext of rwmutex with a nil context", ErrNilContext))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !rw.l.LockFast(g) {
		if err := rw.l.Lock(g, ctx, core.ClassRWMutex); err != nil {
			return err
		}
	}
	rw.l.SetWriterPC(core.SitePC(fpstack.CallerPC, 0))
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderAcquired(g, false, false, mw)
	}
	return nil
}

// LockTimeout locks rw for writing, waiting at most d for it, and reports
// whether it did: Java's writeLock().tryLock(timeout) and C#'s
// ReaderWriterLockSlim.TryEnterWriteLock(timeout). On false, rw is not
// held by the caller (readers that queued behind the abandoned attempt are
// let in). If d <= 0, LockTimeout does not wait: it is TryLock, except
// that a holder's call panics as below.
//
// With deadlock detection on, LockTimeout returns false at once, without
// the lock, if waiting would close a deadlock cycle; the detector reports
// the cycle as it does for Lock (detect.WithReporter), and the caller
// backs off as it would after a timeout. Like Lock, it panics with an
// error matching ErrRecursiveLock if the caller already holds rw.
//
// The uncontended call allocates nothing; a call that has to park (for
// the writer before it, then for the readers to leave) makes one timer.
func (rw *RWMutex) LockTimeout(d time.Duration) bool {
	g := gid.Get()
	if !rw.l.LockFast(g) && !rw.lockTimeoutSlow(g, d) {
		return false
	}
	rw.l.SetWriterPC(core.SitePC(fpstack.CallerPC, 0))
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderAcquired(g, d <= 0, false, mw) // a wait of zero cannot block: no order edge
	}
	return true
}

func (rw *RWMutex) lockTimeoutSlow(g int64, d time.Duration) bool {
	rw.checkHolder(g, "lock") // a broken contract, however short the wait
	if d <= 0 {
		return rw.l.TryLock(g)
	}
	return rw.l.LockDeadline(g, nil, time.Now().Add(d), core.ClassRWMutex) == nil
}

// Unlock unlocks rw for writing.
//
// It is a run-time error, reported by a panic matching ErrNotOwner, if the
// calling goroutine does not hold rw for writing; rw is left unchanged. If
// the caller lost its write lock in a condvar.Cond wait whose reacquire
// panicked, its next such Unlock panics with an error that also matches
// that panic value, or returns quietly if the goroutine is exiting by
// runtime.Goexit (see condvar.Cond.Wait), as Mutex's does.
func (rw *RWMutex) Unlock() { rwUnlock(rw) }

// rwUnlockGo is Unlock in Go; rwUnlock is it or its assembly fast path.
//
//lint:ignore U1000 rwfast_amd64.s jumps here; rwfast_go.go calls it where the assembly is not built
func rwUnlockGo(rw *RWMutex) {
	g := gid.Get()
	if !rw.l.Unlock(g) {
		rw.unlockFailed(g)
		return
	}
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderReleased(g, false, mw)
	}
}

// rwUnlockHeld is where the assembly goes when it saw no reader queued
// and its CompareAndSwap from the caller's ID to 0 failed: writers are
// queued, or the caller is not the writer.
//
//lint:ignore U1000 only rwfast_amd64.s jumps here; unused where the assembly is not built
func rwUnlockHeld(rw *RWMutex) {
	g := gid.Get()
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
func rwUnlockWake(rw *RWMutex) { rw.l.WakeQueuedReaders() }

// unlockFailed panics for an Unlock by g, which does not hold the write
// lock; or, if a Cond wait of g lost its hold (see condvar.Cond.Wait),
// accounts for it: it returns quietly when g is exiting by runtime.Goexit
// and otherwise panics with the retake's panic value attached.
//
//lint:ignore U1000 called only from rwUnlockGo and rwUnlockHeld, which the assembly reaches
func (rw *RWMutex) unlockFailed(g int64) {
	if cause, quiet, ok := rw.l.WriterLock().TakeLost(g); ok {
		if quiet {
			return
		}
		panic(core.LostError(fmt.Sprintf("mutex: unlock by goroutine %d of rwmutex its cond wait could not retake", g), cause))
	}
	switch o := rw.l.Writer(); {
	case rw.l.HoldsRead(g) > 0:
		panic(core.Misuse(fmt.Sprintf("mutex: unlock by goroutine %d of rwmutex it holds only for reading (use RUnlock)", g), ErrNotOwner))
	case o != 0:
		panic(core.Misuse(fmt.Sprintf("mutex: unlock by goroutine %d of rwmutex write-locked by goroutine %d", g, o), ErrNotOwner))
	}
	panic(core.Misuse(fmt.Sprintf("mutex: unlock of rwmutex not write-locked (by goroutine %d)", g), ErrNotOwner))
}

// RLock locks rw for reading. If a writer holds rw or is waiting for the
// readers to leave, RLock blocks until the writer unlocks.
//
// RLock panics with an error matching ErrRecursiveLock if the calling
// goroutine already holds rw, for reading ("recursive read locking") or
// for writing ("recursive locking"), whether or not a writer is waiting.
// With deadlock detection on, it panics with a *detect.DeadlockError,
// without the lock, if waiting would close a deadlock cycle.
func (rw *RWMutex) RLock() { rwRLock(rw) }

// rwRLockGo is RLock in Go; rwRLock is it or its assembly fast path,
// which does what RLockFast does and jumps to rwRLockGo (having changed
// nothing) or rwRLockRetreat for everything else.
//
//lint:ignore U1000 rwfast_amd64.s jumps here; rwfast_go.go calls it where the assembly is not built
//go:noinline
func rwRLockGo(rw *RWMutex) {
	g := gid.Get()
	if rw.l.RLockFast(g, false) {
		rw.l.SetReaderPC(g, core.SitePC(fpstack.CallerPC, entrySkip))
	} else {
		rw.rlockSlow(g)
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
func rwRLockRetreat(rw *RWMutex) {
	g := gid.Get()
	rw.l.RetreatRead(g)
	rw.rlockSlow(g)
	rw.l.SetReaderPC(g, fpstack.CallerPC(entrySkip))
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderAcquired(g, false, true, mw)
	}
}

//lint:ignore U1000 called only from rwRLockGo and rwRLockRetreat, which the assembly reaches
func (rw *RWMutex) rlockSlow(g int64) {
	rw.checkHolder(g, "rlock")
	if err := rw.l.RLockSlow(g, nil, core.ClassRWMutex); err != nil {
		panic(err)
	}
}

// TryRLock tries to lock rw for reading and reports whether it succeeded.
// It returns false while a writer holds rw or waits for readers to leave,
// and when the caller already holds rw in either mode.
func (rw *RWMutex) TryRLock() bool {
	g := gid.Get()
	if rw.l.Writer() == g || rw.l.HoldsRead(g) > 0 || !rw.l.TryRLock(g, false) {
		return false
	}
	rw.l.SetReaderPC(g, core.SitePC(fpstack.CallerPC, 0))
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderAcquired(g, true, true, mw)
	}
	return true
}

// RLockContext locks rw for reading, blocking until it is available or
// ctx is done. On success, it returns nil. On failure, it returns ctx.Err()
// and leaves rw not held by the caller. If ctx is already done, it fails
// even if rw is free. With deadlock detection on, it returns a
// *detect.DeadlockError, without the lock, if waiting would close a
// deadlock cycle. Like RLock, it panics with an error matching
// ErrRecursiveLock if the caller already holds rw, and with one matching
// ErrNilContext if ctx is nil.
func (rw *RWMutex) RLockContext(ctx context.Context) error {
	g := gid.Get()
	rw.checkHolder(g, "rlock")
	if ctx == nil {
		panic(core.Misuse("mutex: RLockContext of rwmutex with a nil context", ErrNilContext))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !rw.l.RLockFast(g, false) {
		if err := rw.l.RLockSlow(g, ctx, core.ClassRWMutex); err != nil {
			return err
		}
	}
	rw.l.SetReaderPC(g, core.SitePC(fpstack.CallerPC, 0))
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderAcquired(g, false, true, mw)
	}
	return nil
}

// RLockTimeout locks rw for reading, waiting at most d for it, and
// reports whether it did: Java's readLock().tryLock(timeout) and C#'s
// ReaderWriterLockSlim.TryEnterReadLock(timeout). On false, rw is not
// held by the caller. If d <= 0, RLockTimeout does not wait: it is
// TryRLock, except that a holder's call panics as below.
//
// With deadlock detection on, RLockTimeout returns false at once, without
// the lock, if waiting would close a deadlock cycle, as LockTimeout does.
// Like RLock, it panics with an error matching ErrRecursiveLock if the
// caller already holds rw, for reading or for writing.
//
// The uncontended call allocates nothing; a call that has to park makes
// one timer.
func (rw *RWMutex) RLockTimeout(d time.Duration) bool {
	g := gid.Get()
	if !rw.l.RLockFast(g, false) && !rw.rlockTimeoutSlow(g, d) {
		return false
	}
	rw.l.SetReaderPC(g, core.SitePC(fpstack.CallerPC, 0))
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderAcquired(g, d <= 0, true, mw)
	}
	return true
}

func (rw *RWMutex) rlockTimeoutSlow(g int64, d time.Duration) bool {
	rw.checkHolder(g, "rlock")
	if d <= 0 {
		return rw.l.TryRLock(g, false)
	}
	return rw.l.RLockDeadline(g, nil, time.Now().Add(d), core.ClassRWMutex) == nil
}

// RUnlock undoes a single RLock call by the calling goroutine.
//
// It is a run-time error, reported by a panic matching ErrNotOwner, if the
// calling goroutine does not hold rw for reading; rw is left unchanged.
// Unlike sync.RWMutex, a read lock cannot be released by a goroutine other
// than the one that took it. If the caller lost its read lock in a wait
// on a condvar.Cond of rw.RLocker() whose reacquire panicked, its next
// such RUnlock panics with an error that also matches that panic value,
// or returns quietly if the goroutine is exiting by runtime.Goexit, as
// Unlock does after a wait on the write lock.
func (rw *RWMutex) RUnlock() { rwRUnlock(rw) }

// rwRUnlockGo is RUnlock in Go; rwRUnlock is it or its assembly fast
// path, which does what RUnlockFast does and jumps to rwRUnlockGo (having
// changed nothing) or rwRUnlockWake for everything else.
//
//lint:ignore U1000 rwfast_amd64.s jumps here; rwfast_go.go calls it where the assembly is not built
func rwRUnlockGo(rw *RWMutex) {
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
func rwRUnlockWake(rw *RWMutex) { rw.l.WakeDrainer() }

// runlockSlow finishes an RUnlock that the inlined fast path did not.
//
//lint:ignore U1000 called only from rwRUnlockGo, which the assembly reaches
func (rw *RWMutex) runlockSlow(g int64, r int) {
	switch {
	case r == core.RUnlockedWake:
		rw.l.WakeDrainer()
	case !rw.l.RUnlock(g, false):
		rw.runlockFailed(g)
	}
}

// runlockFailed is what an RUnlock by g that holds no read lock of rw
// does (runlockSlow's, and a release by a Cond wait of rw.RLocker()).
func (rw *RWMutex) runlockFailed(g int64) {
	if cause, quiet, ok := rw.l.WriterLock().TakeLost(g); ok {
		if quiet {
			return
		}
		panic(core.LostError(fmt.Sprintf("mutex: runlock by goroutine %d of rwmutex its cond wait could not retake", g), cause))
	}
	if rw.l.Writer() == g {
		panic(core.Misuse(fmt.Sprintf("mutex: runlock by goroutine %d of rwmutex it holds for writing (use Unlock)", g), ErrNotOwner))
	}
	panic(core.Misuse(fmt.Sprintf("mutex: runlock by goroutine %d, which holds no read lock of the rwmutex (%d readers)", g, rw.l.Readers()), ErrNotOwner))
}

//go:noinline
func (rw *RWMutex) orderAcquired(g int64, try, read bool, mw int32) {
	core.AcquiredRW(rw.l.WriterLock(), core.ClassRWMutex, g, try, read, mw)
}

//go:noinline
//lint:ignore U1000 called only from rwRUnlockGo, rwUnlockGo and rwUnlockHeld, which the assembly reaches
func (rw *RWMutex) orderReleased(g int64, read bool, mw int32) {
	core.ReleasedRW(rw.l.WriterLock(), g, read, mw)
}

// Owned reports whether the calling goroutine holds rw for writing.
func (rw *RWMutex) Owned() bool { return rw.l.Writer() == gid.Get() }

// ReadOwned reports whether the calling goroutine holds rw for reading.
func (rw *RWMutex) ReadOwned() bool { return rw.l.HoldsRead(gid.Get()) > 0 }

// Locked reports whether a goroutine holds rw for writing. Like Readers,
// the answer may be out of date by the time the caller looks at it: use it
// for assertions and diagnostics, not for synchronization.
func (rw *RWMutex) Locked() bool { return rw.l.WriteLocked() }

// Readers returns the number of goroutines holding rw for reading.
func (rw *RWMutex) Readers() int { return rw.l.Readers() }

// RLocker returns a sync.Locker that implements Lock and Unlock by calling
// rw.RLock and rw.RUnlock. A condvar.Cond bound to it works as a
// sync.Cond on sync.RWMutex's RLocker does: a wait requires the caller's
// read lock, releases it and takes it again before returning.
func (rw *RWMutex) RLocker() sync.Locker { return rlocker{rw} }

type rlocker struct{ rw *RWMutex }

func (r rlocker) Lock()   { r.rw.RLock() }
func (r rlocker) Unlock() { r.rw.RUnlock() }

// rwCondLocker lets condvar release and retake rw's write lock around a
// wait. The writer of an RWMutex holds no read lock (that would be
// recursive locking), so there is one hold to restore.
type rwCondLocker struct{ rw *RWMutex }

func (c rwCondLocker) Owned() bool     { return c.rw.Owned() }
func (c rwCondLocker) ReleaseAll() int { c.rw.Unlock(); return 1 }

// Restore retakes the write lock (see core.RetakeForCond).
func (c rwCondLocker) Restore(int) {
	core.RetakeForCond(c.rw.l.WriterLock(), core.ClassRWMutex, gid.Get(), 1, c.rw.Lock)
}
