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
// Waiters are signalled in FIFO order, and no signal is lost: when a
// waiter's timeout or cancellation races a Signal that has already chosen
// it, the waiter passes the signal on to the next waiter, if there is one.
// (A Broadcast's wakeup is not passed on: it reached every waiter of its
// moment, and passing it on would wake one that came later.)
package condvar
