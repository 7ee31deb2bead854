package core

import (
	"errors"
)

// ErrNotOwner is the one sentinel behind mutex.ErrNotOwner,
// monitor.ErrNotOwner and condvar.ErrNotOwner: they are the same value, so
// errors.Is matches a misuse whichever package's name the caller uses.
var ErrNotOwner = errors.New("lock not held by the calling goroutine")

// ErrNilContext is the one sentinel behind mutex.ErrNilContext,
// monitor.ErrNilContext and condvar.ErrNilContext: LockContext and
// WaitContext called with a nil context.Context.
var ErrNilContext = errors.New("nil context")

// ErrStranded is the one sentinel behind mutex.ErrStranded and
// monitor.ErrStranded: a release that could not wake a waiter left
// durably blocked in a testing/synctest bubble that has ended (see
// wakeable).
var ErrStranded = errors.New("waiter stranded in an ended synctest bubble")

// ErrReadLocker is the one sentinel behind condvar.ErrReadLocker: a wait
// on a condition of a read-write lock's read side by the goroutine that
// holds the write lock.
var ErrReadLocker = errors.New("read-lock condition wait by the writer")

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
