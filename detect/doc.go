// Package detect finds deadlocks among locksmith locks (mutex.Mutex and
// monitor.Monitor, and the reacquire at the end of a condvar.Cond wait):
// actual deadlocks the moment they form, and, in Order mode, lock-order
// inversions before they bite.
//
// # Modes
//
// The mode is set at start-up from the environment variable
// LOCKSMITH_DETECT (off, cycles or order), so that
//
//	LOCKSMITH_DETECT=order go test -race ./...
//
// turns full checking on without code changes, and at run time with
// Configure(WithMode(...)). Configuration is an immutable value swapped
// atomically: a Lock reads one word, never a mutable global struct.
//
//   - Off: no checks, no reports, nothing on the uncontended path. A
//     goroutine about to park still registers as blocked (a sharded map
//     write on each side of the park), so that turning Cycles or Order on
//     later sees the goroutines parked before. The owner checks of the
//     locks themselves (recursive locking, unlock by a non-owner) still
//     hold.
//   - Cycles (the default): when a goroutine is about to park on a lock,
//     it follows the wait-for chain: the lock, its owner, the lock that
//     owner waits for, its owner, and so on. If the chain comes back to the
//     caller, the deadlock exists now. The walk is made twice and reported
//     only if both walks agree, each blocked goroutine having the same
//     registration epoch in both: then every edge held at one instant
//     between the walks, so a report is never a false positive. The work
//     happens only on the path that parks; an uncontended Lock and Unlock do
//     exactly what they do in Off mode, plus one load of the mode word.
//   - Order: Cycles, plus lock-order validation in the manner of Linux's
//     lockdep, plus wait-timeout reports (DefaultOrderWaitTimeout, 30 s,
//     unless WithWaitTimeout says otherwise).
//
// # The order model
//
// Order mode treats the program's locks as if they were meant to be
// partially ordered: a < b means "a must be acquired before b". As in
// lockdep, an acquisition of b records the edge a -> b from the nearest
// lock a its goroutine holds (and from any lock taken by TryLock above
// that one), with the stacks where both were acquired; transitivity says
// the rest (holding x, a and taking b records a -> b, and x -> a was
// recorded when a was taken). The graph so grows with the pairs of locks
// actually nested, not with the square of the locks held at once. An acquisition that would add an edge
// closing a cycle of any length (a < b < ... < a) contradicts every
// partial order, and is reported as a possible deadlock even though this
// run did not hang: another interleaving of the same code can. Both halves
// of an inversion may run in one goroutine or in several. The edge that
// closed a reported cycle stays outside the order: a cycle that could only
// be closed through it is not reported (lockdep stops checking after its
// first report).
//
// Each edge is validated once: later acquisitions find it in a lock-free
// hash table, so the steady state costs a hash lookup per acquisition,
// plus a per-goroutine record of held locks. A new edge that agrees with
// the topological order the detector keeps goes in without any search;
// only one against it searches, among the locks ordered between its two
// ends. Re-entry into a Monitor is never an edge and never a report.
// A TryLock adds no edge to the lock it tries (it cannot block), but locks
// taken while holding it do. A LockContext can block, so it adds edges like
// Lock.
//
// # Reports and what happens
//
// A report is a *Report value with a Kind (Deadlock, LockOrder or
// WaitTimeout), the cycle as Steps (goroutine, lock held, lock waited for
// or acquired next, stack), and a String method that prints it in the
// manner of jstack's "Found one Java-level deadlock" and lockdep's
// "possible circular locking dependency detected". Locks are named by
// SetName, else by type and address and the site of the first Lock the
// detector recorded (in Order mode the lock's first acquisition; in Cycles
// mode, which does nothing on the fast path, the first Lock that had to
// wait for it). Stacks are file:line frames
// with the detector's, the locks' and the runtime's own frames trimmed.
// Each distinct cycle is reported once.
//
//   - Deadlock: the goroutine that would close the cycle does not park. Lock
//     panics with a *DeadlockError (errors.Is(err, ErrDeadlock)); its
//     deferred Unlocks run and free the others, as a database aborts one
//     transaction of a deadlocked set. LockContext returns the error
//     instead, without the lock, so the caller can release what it holds,
//     back off and retry. A Cond wait whose reacquire would close a cycle
//     panics the same way, and returns without holding the lock; the
//     Unlocks the caller deferred for the holds it lost panic with an
//     error that also matches ErrDeadlock, so that recover() in the Lock;
//     defer Unlock; Wait idiom sees the deadlock (see condvar.Cond.Wait).
//   - LockOrder and WaitTimeout: the report is printed once to stderr and
//     execution continues.
//
// WithReporter sends every report to a function instead of stderr. For a
// Deadlock, after the reporter returns, the goroutine closing the cycle
// still panics (or LockContext still returns the error): waiting on would
// block it forever. The library never calls os.Exit.
//
// A goroutine waiting in a Cond, or in a Monitor's Wait, holds nothing of
// that lock while it waits and takes no part in wait-for edges.
//
// # What it cannot find
//
// Only locksmith locks are seen. A deadlock through channels, sync.Mutex,
// sync.WaitGroup, a Cond whose Signal never comes, or any other primitive
// is invisible to the wait-for walk; if a locksmith lock is part of the
// hang, a wait-timeout report names the goroutine blocked on it, the
// holder, and the holder's current stack, which usually shows what the
// holder is stuck on. Order mode finds inversions only between
// acquisitions that some run actually performed. Go runs no code when a
// goroutine exits, so a lock held by a goroutine that exited stays held
// for good (Ruby releases a dead thread's Monitor; Go gives us no hook to
// do so): Dump and wait-timeout reports say that the holder has exited.
//
// # Cost
//
// Off and Cycles cost the same on the uncontended path. Order mode costs a
// few tens of nanoseconds per acquisition and release in the steady state;
// its per-goroutine records live in a fixed table of 4096 slots (under
// 1 MiB when all are in use), claimed by a goroutine when it takes its
// first lock and freed when it releases its last, with sharded locked maps
// behind it for goroutines beyond what the table finds. Records name locks
// weakly; those of goroutines that exited holding locks, or released them
// while Order mode was off, are dropped at the next garbage collection
// once their locks are collected or no longer held by them.
// The detector never keeps a lock alive: a lock's metadata is dropped, with
// its graph edges, when the lock is garbage collected; the order the lock
// carried between its neighbours is kept as direct edges between them.
// See the README for measured figures.
package detect
