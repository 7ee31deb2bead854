// Package mutex provides Mutex, a mutual exclusion lock that knows which
// goroutine holds it.
//
// A Mutex is what Ruby's Thread::Mutex is to Ruby: not reentrant, and
// strict about ownership. Locking it again from the goroutine that holds it
// panics at once with ErrRecursiveLock ("deadlock; recursive locking")
// instead of hanging, and unlocking it from any other goroutine, or when it
// is not locked, panics with ErrNotOwner and leaves it as it was. These
// checks are part of the Mutex itself and hold in every detection mode of
// package detect, including Off.
//
// RWMutex is the reader/writer form, with sync.RWMutex's methods: any
// acquisition by a goroutine that already holds it, in either mode, panics
// with ErrRecursiveLock, so the recursive read lock that hangs a
// sync.RWMutex only when a writer arrives between the two RLocks is caught
// on every run.
//
// Every broken contract panics with a *misuse.Error, which errors.Is
// matches to its sentinel (ErrRecursiveLock, ErrNotOwner, ErrNilContext,
// ErrStranded) and errors.As reads.
//
// For a lock that its owner may take again, see package monitor.
package mutex
