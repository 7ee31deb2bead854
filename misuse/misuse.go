package misuse

import "errors"

// ErrNotOwner is matched (with errors.Is) by the panic value of an Unlock
// or RUnlock by a goroutine that does not hold the lock, of a Monitor's
// Wait, Notify and NotifyAll without the monitor, and of a condvar.Cond
// wait without its owner-aware lock. mutex.ErrNotOwner,
// monitor.ErrNotOwner and condvar.ErrNotOwner are this value.
var ErrNotOwner = errors.New("lock not held by the calling goroutine")

// ErrNilContext is matched (with errors.Is) by the panic value of a
// LockContext, RLockContext or WaitContext (or a predicate wait's context
// form) called with a nil context.Context. mutex.ErrNilContext,
// monitor.ErrNilContext and condvar.ErrNilContext are this value.
var ErrNilContext = errors.New("nil context")

// ErrStranded is matched (with errors.Is) by the panic value of an Unlock
// or RUnlock that could not wake a waiter left durably blocked in a
// testing/synctest bubble that has ended (see mutex.ErrStranded).
// mutex.ErrStranded and monitor.ErrStranded are this value.
var ErrStranded = errors.New("waiter stranded in an ended synctest bubble")

// ErrReadLocker is matched (with errors.Is) by the panic value of a wait on
// a condvar.Cond bound to the RLocker of a locksmith read-write lock, made
// by the goroutine that holds the lock for writing: the wait would keep
// the write lock. condvar.ErrReadLocker is this value.
var ErrReadLocker = errors.New("read-lock condition wait by the writer")

// Error is the panic value of a call that broke a lock's contract. The
// lock it was made on is left as it was, and usable.
//
// Error matches Err with errors.Is, and Cause too when it is set; so an
// Unlock that accounts for a hold lost in a condvar.Cond wait whose
// reacquire was refused as a deadlock matches ErrNotOwner and
// detect.ErrDeadlock, and errors.As finds the *detect.DeadlockError.
type Error struct {
	// Msg is the whole message, as Error returns it: the package, what
	// went wrong and the goroutines involved, for example
	// "mutex: unlock by goroutine 9 of mutex held by goroutine 7".
	Msg string
	// Err is the sentinel that names the broken contract: ErrNotOwner,
	// ErrNilContext, ErrStranded, ErrReadLocker, or a package's own
	// (mutex.ErrRecursiveLock, monitor.ErrUpgrade, condvar.ErrNilLocker,
	// condvar.ErrCopied, condvar.ErrLockerChanged, detect.ErrBadOption,
	// detect.ErrNotLocksmithLock).
	Err error
	// Cause is what made the call fail when something other than the
	// caller did, else nil: for an Unlock of a hold lost in a Cond wait,
	// the panic value of the failed reacquire, if it was an error.
	Cause error
	// Goroutine is the ID of the goroutine that made the call, as
	// runtime.Stack prints it ("goroutine 7 [running]").
	Goroutine int64
}

// Error returns e.Msg, or, if that is empty, the text of e.Err.
func (e *Error) Error() string {
	if e.Msg == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Msg
}

// Unwrap returns Err and, if set, Cause, for errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	switch {
	case e.Err == nil && e.Cause == nil:
		return nil
	case e.Cause == nil:
		return []error{e.Err}
	case e.Err == nil:
		return []error{e.Cause}
	}
	return []error{e.Err, e.Cause}
}
