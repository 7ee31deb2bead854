package core

import "github.com/locksmith-go/locksmith/internal/gid"

// ReadHost is what ReadCond needs of the public read-write lock behind
// it. Packages mutex and monitor implement it on an unexported type that
// wraps their lock, so that its methods are no part of their API.
type ReadHost interface {
	// RW returns the lock's engine and its class.
	RW() (*RWLock, *Class)
	// RLock takes one read hold, as the lock's RLock does.
	RLock()
	// RUnlockFailed does what the lock's RUnlock does when g holds no
	// read lock: it panics, or returns for a hold lost by a Cond wait
	// of a goroutine ending with runtime.Goexit.
	RUnlockFailed(g int64)
	// WriterWaits returns the message of the misuse panic of goroutine
	// g, the writer, waiting on a Cond of the read lock.
	WriterWaits(g int64) string
}

// ReadCond is the CondLocker of a condvar.Cond bound to the RLocker() of
// a read-write lock: a wait releases every read hold of the caller and
// restores the count, as sync.Cond's Wait releases and retakes
// sync.RWMutex's read lock. mutex.RWMutex is not reentrant, so its count
// is one; monitor.RWMonitor's may be more. H is the lock's ReadHost.
type ReadCond[H ReadHost] struct{ H H }

// Owned reports whether the caller holds the lock for reading. The
// writer, with or without read holds, may not wait, and gets a panic
// matching ErrReadLocker instead: releasing its read holds would leave it
// the writer, and no goroutine could take the lock to change the
// condition.
func (c ReadCond[H]) Owned() bool {
	l, _ := c.H.RW()
	g := gid.Get()
	if l.Writer() == g {
		panic(Misuse(c.H.WriterWaits(g), ErrReadLocker))
	}
	return l.HoldsRead(g) > 0
}

// ReleaseAll releases every read hold of the caller at once and returns
// their count.
func (c ReadCond[H]) ReleaseAll() int {
	l, _ := c.H.RW()
	g := gid.Get()
	n := l.HoldsRead(g)
	if !l.RUnlock(g, true) {
		c.H.RUnlockFailed(g)
	}
	if mw := OrderWord(); mw >= ModeOrder {
		ReleasedRW(l.WriterLock(), g, true, mw)
	}
	return n
}

// Restore retakes the read lock and sets the hold count back to n (see
// RetakeForCond).
func (c ReadCond[H]) Restore(n int) {
	l, k := c.H.RW()
	g := gid.Get()
	RetakeForCond(l.WriterLock(), k, g, n, c.H.RLock)
	if n > 1 {
		l.AddReadHolds(g, n-1)
	}
}

// RetakeForCond runs lock, which retakes l (of class k), or the read-write
// lock whose writer lock l is, for goroutine g at the end of a Cond wait
// that released n holds. If lock panics (deadlock detection refuses it,
// or a LockOrder reporter panics or exits the goroutine), the n holds are
// recorded as lost (see LoseHolds), for the failed Unlocks or RUnlocks
// that follow, before the panic goes on; once lock returns, g's earlier
// record on l is dropped.
func RetakeForCond(l *Lock, k *Class, g int64, n int, lock func()) {
	done := false
	defer func() {
		if !done {
			cause := recover()
			l.LoseHolds(k, g, n, cause)
			if cause != nil {
				panic(cause)
			}
		}
	}()
	lock()
	done = true
	l.ForgetLost(g)
}
