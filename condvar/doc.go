// Package condvar provides Cond, a condition variable with timeouts,
// cancellation and predicate waits, for any sync.Locker and in particular
// for locksmith's owner-aware locks.
//
// Cond is a drop-in for sync.Cond: it has the same exported L field, so
// &condvar.Cond{L: l}, or a zero Cond whose L is set before first use,
// works as condvar.New(l) does; Signal and Broadcast may be called with or
// without the lock held, as sync.Cond's may.
//
// A Cond bound to a monitor.Monitor releases the monitor completely while
// it waits, whatever the hold count, and restores exactly that count before
// Wait returns, as Java's Condition.await and Ruby's MonitorMixin do; one
// bound to a mutex.RWMutex or monitor.RWMonitor binds to its write lock,
// and a wait on an RWMonitor releases and restores the caller's write and
// read holds alike. One bound to the RLocker of either binds to the read
// lock, as a sync.Cond on sync.RWMutex's RLocker does: a wait releases the
// caller's read lock (every read hold of an RWMonitor) and takes it again
// (restoring the count). A Cond bound to an owner-aware lock (mutex.Mutex,
// monitor.Monitor, their read-write forms and RLockers, or any sync.Locker
// with an Owned() bool method) checks that the caller holds it on every
// wait and panics with ErrNotOwner if not; bound to a plain sync.Locker
// such as *sync.Mutex, which cannot tell its owner, Wait requires the
// lock as sync.Cond's does. (monitor.Monitor's own Notify and NotifyAll
// require the monitor held, as Java's notify does.)
//
// Waiters are signalled in FIFO order, and no signal is lost. A Signal, a
// waiter's timeout and a waiter's cancellation each try to decide how that
// wait ends with one atomic compare-and-swap, so exactly one of them
// decides: a Signal never chooses a waiter whose timeout or cancellation
// has already decided its wait (the signal goes to the next waiter, as Java
// requires; Python's Condition can drop it), and a waiter that a Signal
// chose reports that it was signalled (WaitTimeout returns true,
// WaitContext nil) even if its time ran out while it was being woken. A
// waiter that a Signal chose but that cannot return normally (the lock's
// Unlock panicked as it began to wait, or retaking the lock panicked, for
// instance because deadlock detection refused it) passes the signal on to
// the next waiter, unless a Broadcast has woken every waiter there was
// since; a waiter that nobody signalled passes nothing on.
//
// Every broken contract panics with a *misuse.Error matching a sentinel:
// ErrNotOwner, ErrNilLocker, ErrCopied, ErrLockerChanged, ErrNilContext,
// and ErrReadLocker for a wait on a Cond of a locksmith read-write lock's
// RLocker by the goroutine that holds the lock for writing (the wait
// would keep the write lock).
//
// An untimed Wait outside testing/synctest bubbles parks as sync.Cond.Wait
// does, on a ticket of the runtime's notify list kept in the Cond, and
// takes no lock of the Cond's own; Signal takes a small mutex of the
// Cond's own (Signal may be called without the user's lock) and notifies
// the oldest ticket. Timed, cancellable and bubbled waits, and untimed ones
// made while such a wait is queued, queue a record guarded by that mutex
// and park on the record's own sync.Cond (reused, so they allocate nothing
// in the steady state but their timer or context callback), which a
// testing/synctest bubble counts as durably blocked; Signal wakes tickets
// and records in the order their waits began. A Cond made inside a bubble
// and used only by its goroutines keeps its waiters there durably blocked;
// a Cond made outside (a package-level one) or used from two domains is
// safe to share, but its waiters in bubbles are not durably blocked (see
// Cond and docs/synctest.md).
package condvar

// The files of the package, one idea each:
//   - cond.go: the Cond type, New, binding to L, the error values and the
//     public entry points (Wait and its variants, Signal, Broadcast,
//     Waiters).
//   - ticket.go: the untimed wait on a ticket of the runtime's notify list,
//     the tick word it checks, and abandoned tickets (skip).
//   - ticketpath.go, ticketpath_purego.go: whether the ticket path is
//     built (not with -tags purego); the notify list itself is
//     internal/rt's NotifyList.
//   - queue.go: the queued wait, the waiter record and its reuse, the
//     decision of a wait, the queue itself, and timeouts.
//   - signal.go: choosing the waiter a Signal wakes, waits moving from a
//     ticket to the queue (movers), and passing a signal on.
//   - bubbles.go: testing/synctest bubbles: durable parks, and the
//     pending wakeups that a goroutine of another domain leaves.
//   - race.go, norace.go: the happens-before edge of a ticket wait under
//     the race detector.
