package testutil

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/petermattis/goid"
)

// FloorLock is a measuring stick, not a lock to use: the simplest lock
// that knows its owner's goroutine ID. Its rows in the tables say what
// owner tracking costs at least on the machine that ran them, so that
// locksmith's locks can be judged against it rather than only against
// sync.Mutex, which tracks no owner. The zero value is an unlocked lock.
// It must not be copied after first use.
//
// It lives here so that the benchmarks of mutex and monitor and package
// bench (bench.FloorLock) measure the same code.
//
// The state is one atomic word holding the owner's goroutine ID (0 when
// free). Lock and Unlock each read the ID with goid.Get (the only code in
// the module outside internal/gid that does: this lock is the reference
// for what goid costs), then make one CompareAndSwap. Unlock's
// CompareAndSwap from the caller's ID to 0 is also its owner check. A
// waiter only yields (runtime.Gosched) between attempts: it never parks,
// so under contention it burns its core, and it has no fairness, no
// deadlock detection, no re-entry (the owner's Lock panics rather than
// spinning forever) and no context.
type FloorLock struct {
	owner atomic.Int64 // goroutine ID of the holder, 0 when free
}

var _ sync.Locker = (*FloorLock)(nil)

// Lock locks l, yielding the processor until it is free.
func (l *FloorLock) Lock() {
	g := goid.Get()
	for !l.owner.CompareAndSwap(0, g) {
		if l.owner.Load() == g {
			panic("testutil: FloorLock: recursive locking")
		}
		runtime.Gosched()
	}
}

// Unlock unlocks l. It panics if the caller does not hold l.
func (l *FloorLock) Unlock() {
	if !l.owner.CompareAndSwap(goid.Get(), 0) {
		panic("testutil: FloorLock: unlock by a goroutine that does not hold the lock")
	}
}
