package deadlock

import (
	"sync"

	"github.com/locksmith-go/locksmith/mutex"
)

// An RWMutex is a drop-in replacement for sync.RWMutex, over a
// mutex.RWMutex that package detect watches. The zero value for an RWMutex
// is an unlocked mutex.
//
// An RWMutex must not be copied after first use.
//
// The memory model is sync.RWMutex's: the n'th call to Unlock
// “synchronizes before” the m'th call to Lock for any n < m; for any call
// to RLock there is an n such that the n'th Unlock synchronizes before it
// and the matching RUnlock before the n+1'th Lock.
//
// The write lock may be unlocked by another goroutine than the one that
// locked it, and the writer may lock it again (for reading or writing),
// waiting for another goroutine to unlock it, as with Mutex: from the
// first such use on, the RWMutex is a sync.RWMutex, outside detection.
// Read locks are the goroutine's own: RUnlock by a goroutine that holds no
// read lock panics with mutex.ErrNotOwner; and a goroutine's RLock or Lock
// while it holds a read lock panics with mutex.ErrRecursiveLock at once
// (sync.RWMutex's documentation forbids recursive read locking; Lock
// would wait for the caller's own read lock).
type RWMutex struct {
	inner mutex.RWMutex // the lock until h fires
	h     handoff       // fired by the first Unlock of another goroutine's write lock
	sema  sync.RWMutex  // the lock once h has fired
}

// Lock locks rw for writing. If the lock is already locked for reading or
// writing, Lock blocks until the lock is available. Detection is as for
// Mutex.Lock.
func (rw *RWMutex) Lock() {
	check()
	for !rw.h.done.Load() {
		if rw.inner.Owned() {
			rw.h.await("a deadlock.RWMutex")
			break
		}
		if lockedOrHandedOff(rw.inner.LockContext(&rw.h), &rw.h, "a deadlock.RWMutex") {
			return
		}
	}
	rw.sema.Lock()
}

// TryLock tries to lock rw for writing and reports whether it succeeded.
func (rw *RWMutex) TryLock() bool {
	check()
	if !rw.h.done.Load() {
		if rw.inner.TryLock() {
			return true
		}
		if !rw.h.done.Load() {
			return false
		}
	}
	return rw.sema.TryLock()
}

// Unlock unlocks rw for writing. It is a run-time error, reported by a
// panic matching mutex.ErrNotOwner, if rw is not locked for writing on
// entry to Unlock. Another goroutine than the one that locked rw may
// unlock it.
func (rw *RWMutex) Unlock() {
	if !rw.h.done.Load() {
		if rw.inner.Owned() || !rw.inner.Locked() {
			rw.inner.Unlock()
			return
		}
		rw.h.fire()
		return
	}
	rw.sema.Unlock()
}

// RLock locks rw for reading. It blocks while a writer holds rw or waits
// for the readers to leave.
func (rw *RWMutex) RLock() {
	check()
	for !rw.h.done.Load() {
		if rw.inner.Owned() {
			rw.h.await("a deadlock.RWMutex (for reading)")
			break
		}
		if lockedOrHandedOff(rw.inner.RLockContext(&rw.h), &rw.h, "a deadlock.RWMutex (for reading)") {
			return
		}
	}
	rw.sema.RLock()
}

// TryRLock tries to lock rw for reading and reports whether it succeeded.
func (rw *RWMutex) TryRLock() bool {
	check()
	if !rw.h.done.Load() {
		if rw.inner.TryRLock() {
			return true
		}
		if !rw.h.done.Load() {
			return false
		}
	}
	return rw.sema.TryRLock()
}

// RUnlock undoes a single RLock call of the calling goroutine; it does
// not affect other simultaneous readers.
func (rw *RWMutex) RUnlock() {
	if !rw.h.done.Load() {
		rw.inner.RUnlock()
		return
	}
	rw.sema.RUnlock()
}

// RLocker returns a Locker interface that implements the Lock and Unlock
// methods by calling rw.RLock and rw.RUnlock.
func (rw *RWMutex) RLocker() sync.Locker { return (*rlocker)(rw) }

type rlocker RWMutex

func (r *rlocker) Lock()   { (*RWMutex)(r).RLock() }
func (r *rlocker) Unlock() { (*RWMutex)(r).RUnlock() }
