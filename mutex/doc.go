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
// For a lock that its owner may take again, see package monitor.
package mutex
