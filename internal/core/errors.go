package core

import (
	"errors"
	"sync"
)

// ErrNotOwner is the one sentinel behind mutex.ErrNotOwner,
// monitor.ErrNotOwner and condvar.ErrNotOwner: they are the same value, so
// errors.Is matches a misuse whichever package's name the caller uses.
var ErrNotOwner = errors.New("lock not held by the calling goroutine")

// ErrNilContext is the one sentinel behind mutex.ErrNilContext,
// monitor.ErrNilContext and condvar.ErrNilContext: LockContext and
// WaitContext called with a nil context.Context.
var ErrNilContext = errors.New("nil context")

// ErrReadLocker is the one sentinel behind condvar.ErrReadLocker: a
// condition bound to the read side of a read-write lock.
var ErrReadLocker = errors.New("condition on a read lock")

// Error is a panic value for a broken lock contract: a message that names
// what went wrong and the sentinels it matches with errors.Is.
type Error struct {
	Msg       string
	Sentinels []error
}

func (e *Error) Error() string   { return e.Msg }
func (e *Error) Unwrap() []error { return e.Sentinels }

// Misuse returns an *Error with the given message and sentinels.
func Misuse(msg string, sentinels ...error) *Error {
	return &Error{Msg: msg, Sentinels: sentinels}
}

// CondLocker is what a condition variable needs from an owner-aware lock
// beyond sync.Locker.
type CondLocker interface {
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
	Lock *Lock
	Kind *Kind
	Cond CondLocker
	// CondErr, if not nil, is what condvar.New panics with for this
	// locker: the read side of a read-write lock cannot carry a
	// condition.
	CondErr error
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
