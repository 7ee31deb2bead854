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
// waiter's timeout and a waiter's cancellation each take the waiter out of
// the queue under the Cond's internal lock, so exactly one of them decides
// how that wait ends: a Signal never chooses a waiter whose timeout or
// cancellation has already taken it out (the signal goes to the next
// waiter, as Java requires; Python's Condition can drop it), and a waiter
// that a Signal chose reports that it was signalled (WaitTimeout returns
// true, WaitContext nil) even if its time ran out while it was being woken.
package condvar
