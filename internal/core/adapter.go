package core

import "sync"

// CondLocker is what a condition variable needs from an owner-aware lock
// beyond sync.Locker.
type CondLocker interface {
	// Owned reports whether the caller holds the lock as a wait needs it.
	// It may panic instead, with a misuse error (see Misuse), when the
	// caller holds the lock but a wait would still be wrong, before the
	// wait changes anything: the writer of a read-write lock waiting on
	// a condition of its read lock, which would keep the write lock.
	Owned() bool
	// ReleaseAll releases every hold the caller has and returns the count,
	// for Restore.
	ReleaseAll() int
	// Restore reacquires the lock and sets the hold count back to n.
	Restore(n int)
}

// Adapter is what package mutex or monitor tells the rest of locksmith
// about one of its locks.
type Adapter struct {
	Lock  *Lock
	Class *Class
	Cond  CondLocker
}

var adapters []func(sync.Locker) (Adapter, bool)

// RegisterAdapter is called from package initialisation by the public
// lock packages, so that condvar and detect can see inside their locks
// without an import cycle and without public hooks.
func RegisterAdapter(f func(sync.Locker) (Adapter, bool)) { adapters = append(adapters, f) }

// Adapt returns the adapter for l, if l is a locksmith lock.
func Adapt(l sync.Locker) (Adapter, bool) {
	for _, f := range adapters {
		if a, ok := f(l); ok {
			return a, true
		}
	}
	return Adapter{}, false
}
