// Package condvar provides Cond, a condition variable with timeouts,
// cancellation and predicate waits, for any sync.Locker and in particular
// for locksmith's owner-aware locks.
//
// A Cond bound to a monitor.Monitor releases the monitor completely while
// it waits, whatever the hold count, and restores exactly that count before
// Wait returns, as Java's Condition.await and Ruby's MonitorMixin do. A Cond
// bound to an owner-aware lock (mutex.Mutex, monitor.Monitor, or any
// sync.Locker with an Owned() bool method) checks that the caller holds it
// on every Wait, Signal and Broadcast and panics with ErrNotOwner if not;
// bound to a plain sync.Locker such as *sync.Mutex, which cannot tell its
// owner, Signal and Broadcast work with or without the lock, as with
// sync.Cond.
//
// Waiters are signalled in FIFO order, and no signal is lost. A Signal, a
// waiter's timeout and a waiter's cancellation each try to decide how that
// wait ends with one atomic compare-and-swap, so exactly one of them
// decides: a Signal never chooses a waiter whose timeout or cancellation
// has already decided its wait (the signal goes to the next waiter, as Java
// requires; Python's Condition can drop it), and a waiter that a Signal
// chose reports that it was signalled (WaitTimeout returns true,
// WaitContext nil) even if its time ran out while it was being woken.
//
// On an owner-aware lock the wait queue is guarded by the lock itself,
// which every Wait, Signal and Broadcast holds, so a wait and a signal take
// no other lock; on a plain sync.Locker, a small internal mutex guards it.
// Each waiter parks on its own sync.Cond (reused, so a Wait without a time
// limit allocates nothing in the steady state), which a testing/synctest
// bubble counts as durably blocked.
package condvar
