package mutex

import (
	"fmt"

	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/gid"
)

// readCondLocker lets condvar release and retake rw's read lock around a
// wait on a Cond bound to rw.RLocker(), as sync.Cond's Wait does with
// sync.RWMutex's RLocker: an RWMutex is not reentrant, so there is one
// read hold to restore.
type readCondLocker struct{ rw *RWMutex }

// Owned reports whether the caller holds rw for reading. The writer holds
// no read lock either, but its wait is refused with ErrReadLocker, whose
// message says what to wait on instead: the likely mistake is the Cond.
func (c readCondLocker) Owned() bool {
	g := gid.Get()
	if c.rw.l.Writer() == g {
		panic(core.Misuse(fmt.Sprintf("condvar: wait on a Cond of rw.RLocker() by goroutine %d, which holds the *mutex.RWMutex for writing and no read lock (wait on condvar.New(rw) instead)", g), core.ErrReadLocker))
	}
	return c.rw.l.HoldsRead(g) > 0
}

func (c readCondLocker) ReleaseAll() int { c.rw.RUnlock(); return 1 }

// Restore retakes the read lock (see retakeForCond).
func (c readCondLocker) Restore(int) { c.rw.retakeForCond(c.rw.RLock) }

// retakeForCond runs lock, which retakes rw's write or read lock at the
// end of a Cond wait. If that panics (deadlock detection refuses it, or a
// LockOrder reporter panics or exits the goroutine), the lost hold is
// recorded for unlockFailed or runlockFailed before the panic goes on.
func (rw *RWMutex) retakeForCond(lock func()) {
	g := gid.Get()
	done := false
	defer func() {
		if !done {
			cause := recover()
			rw.l.WriterLock().LoseHolds(core.ClassRWMutex, g, 1, cause)
			if cause != nil {
				panic(cause)
			}
		}
	}()
	lock()
	done = true
	rw.l.WriterLock().ForgetLost(g)
}
