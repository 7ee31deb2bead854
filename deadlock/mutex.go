package deadlock

import (
	"errors"
	"sync"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/mutex"
)

// A Mutex is a drop-in replacement for sync.Mutex, over a mutex.Mutex that
// package detect watches. The zero value for a Mutex is an unlocked mutex.
//
// A Mutex must not be copied after first use.
//
// In the terminology of the Go memory model, the n'th call to Unlock
// “synchronizes before” the m'th call to Lock for any n < m, as with
// sync.Mutex. A successful call to TryLock is equivalent to a call to Lock.
//
// As with sync.Mutex, a locked Mutex is not associated with a particular
// goroutine: one goroutine may lock it and arrange for another to unlock
// it, and the goroutine that holds it may lock it again, waiting until
// another goroutine unlocks it. Detection sees the Mutex as held by the
// goroutine that locked it; the first Unlock by another goroutine shows
// that the Mutex is used as a semaphore, which has no owner to follow:
// from then on the Mutex is a sync.Mutex, outside detection. A Lock by the holder that waits longer than
// Opts.DeadlockTimeout is reported (recursive locking, or a hand-off that
// has not come), and goes on waiting.
type Mutex struct {
	inner mutex.Mutex // the lock until h fires
	h     handoff     // fired by the first Unlock of another goroutine's hold
	sema  sync.Mutex  // the lock once h has fired
}

// Lock locks m. If the lock is already in use, the calling goroutine
// blocks until the mutex is available. Unless detection is disabled in
// Opts, a lock that would close a cycle of goroutines each waiting for a
// lock the next holds panics with a *detect.DeadlockError, without
// taking m, once the report has gone to Opts.LogBuf and
// Opts.OnPotentialDeadlock.
func (m *Mutex) Lock() {
	check()
	for !m.h.done.Load() {
		if m.inner.Owned() {
			m.h.await("a deadlock.Mutex")
			break
		}
		if lockedOrHandedOff(m.inner.LockContext(&m.h), &m.h, "a deadlock.Mutex") {
			return
		}
	}
	m.sema.Lock()
}

// TryLock tries to lock m and reports whether it succeeded.
func (m *Mutex) TryLock() bool {
	check()
	if !m.h.done.Load() {
		if m.inner.TryLock() {
			return true
		}
		if !m.h.done.Load() {
			return false
		}
	}
	return m.sema.TryLock()
}

// Unlock unlocks m. It is a run-time error, reported by a panic matching
// mutex.ErrNotOwner, if m is not locked on entry to Unlock.
//
// A locked Mutex is not associated with a particular goroutine. It is
// allowed for one goroutine to lock a Mutex and then arrange for another
// goroutine to unlock it.
func (m *Mutex) Unlock() {
	if !m.h.done.Load() {
		if m.inner.Owned() || !m.inner.Locked() {
			m.inner.Unlock() // or the panic for a Mutex not locked
			return
		}
		m.h.fire() // another goroutine's hold: hand off
		return
	}
	m.sema.Unlock()
}

// lockedOrHandedOff reports whether a LockContext with a handoff h took
// the lock; false means that the handoff fired. A lock whose holder has
// exited (the *detect.DeadlockError of a wait for it) can still be
// unlocked here by another goroutine: the caller waits for that hand-off
// (h.await, which reports a wait longer than the wait timeout), and false
// is returned then. Any other error, a *detect.DeadlockError of a cycle,
// panics as Lock does.
func lockedOrHandedOff(err error, h *handoff, what string) bool {
	switch err {
	case nil:
		return true
	case errHandedOff:
		return false
	}
	var de *detect.DeadlockError
	if errors.As(err, &de) && heldByExited(de.Report) {
		h.await(what)
		return false
	}
	panic(err)
}

// heldByExited reports whether r is the Deadlock of a wait for a lock
// whose holder has exited, which is none for this package's locks.
func heldByExited(r *detect.Report) bool {
	return r.Kind == detect.Deadlock && len(r.Steps) > 0 && r.Steps[len(r.Steps)-1].Exited
}
