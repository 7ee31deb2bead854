package monitor

import (
	"fmt"

	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/gid"
)

// readCondLocker lets condvar release every read hold of rw around a wait
// on a Cond bound to rw.RLocker(), and restore the count afterwards.
type readCondLocker struct{ rw *RWMonitor }

// Owned reports whether the caller holds rw for reading. The writer, even
// with read holds, may not wait: releasing its read holds would leave it
// the writer, and no goroutine could take rw to change the condition.
func (c readCondLocker) Owned() bool {
	g := gid.Get()
	if c.rw.l.Writer() == g {
		panic(core.Misuse(fmt.Sprintf("condvar: wait on a Cond of rw.RLocker() by goroutine %d, which holds the *monitor.RWMonitor for writing: the wait would keep the write lock (wait on rw.NewCond(), or downgrade first)", g), core.ErrReadLocker))
	}
	return c.rw.l.HoldsRead(g) > 0
}

// ReleaseAll releases every read hold of the caller at once and returns
// their count.
func (c readCondLocker) ReleaseAll() int {
	rw := c.rw
	g := gid.Get()
	n := rw.l.HoldsRead(g)
	if !rw.l.RUnlock(g, true) {
		rw.runlockFailed(g)
	}
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		rw.orderReleased(g, true, mw)
	}
	return n
}

// Restore retakes the read lock and sets the hold count back to n. If the
// retake panics (deadlock detection refuses it, or a LockOrder reporter
// panics or exits the goroutine), the n holds are recorded as lost, for
// the failed RUnlocks that follow, before the panic goes on.
func (c readCondLocker) Restore(n int) {
	rw := c.rw
	g := gid.Get()
	done := false
	defer func() {
		if !done {
			cause := recover()
			rw.l.WriterLock().LoseHolds(core.ClassRWMonitor, g, n, cause)
			if cause != nil {
				panic(cause)
			}
		}
	}()
	rw.RLock()
	done = true
	rw.l.WriterLock().ForgetLost(g)
	if n > 1 {
		rw.l.AddReadHolds(g, n-1)
	}
}
