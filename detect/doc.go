// Package detect finds deadlocks among locksmith locks (mutex.Mutex,
// monitor.Monitor, mutex.RWMutex, monitor.RWMonitor, and the reacquire at
// the end of a condvar.Cond wait):
// actual deadlocks the moment they form, and, in Order mode, lock-order
// inversions before they bite.
//
// # Modes
//
// The mode is set at start-up from the environment variable
// LOCKSMITH_DETECT (off, cycles or order; also Off, OFF and so on), so
// that
//
//	LOCKSMITH_DETECT=order go test -race ./...
//
// turns full checking on without code changes, and at run time with
// Configure(WithMode(...)). Any other value of the variable stops the
// program at start-up with a panic that names the value and the valid
// ones: a typo never leaves the detector silently in another mode.
// Configuration is an immutable value swapped atomically: a Lock reads
// one word, never a mutable global struct.
//
// go test caches a package's result keyed on, among other things, the
// environment variables its test binary read once its tests started. The
// detector reads its variables again at that point (from the first lock
// operation of the tests), so a run with another LOCKSMITH_DETECT or
// LOCKSMITH_DETECT_REPORT is never served the result of the previous one.
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
// # Read-write locks
//
// A read-write lock can have several read holders, and the wait-for graph
// sees them all. A waiting writer waits for the writer and for every
// reader; a waiting first-time reader waits for the writer that holds the
// lock or is waiting for its readers to leave (writer preference: the
// reader queues behind it). So Cycles mode finds the cycles that only
// writer preference closes, such as two goroutines each holding a read
// lock that the other's writer is waiting on, and the walk becomes a
// depth-first search; the found cycle is verified by a second walk, edge
// by edge, with every registration unchanged, as above. Reports, Dump and
// WriteDOT say for each lock whether it is held or wanted for reading or
// for writing, and count its readers; a writer waiting for the readers to
// leave holds nothing yet, and is named as queued on the lock, with the
// first-time readers waiting behind it. A re-entrant read of an RWMonitor
// never waits and is never part of a cycle.
//
// In Order mode every acquisition of a read-write lock is recorded, and
// each lock-order edge remembers whether its goroutine held the first lock
// and took the second for reading or for writing. A read waits only for a
// writer, the one holding the lock or one queued ahead (writer
// preference), so a cycle is reported when each of its locks has been
// write-locked somewhere in Order mode (by Lock, TryLock, LockContext or
// LockTimeout; a Mutex or Monitor always counts): two goroutines taking
// R(A) then R(B) and R(B) then R(A) are not reported while A or B has
// never been write-locked, and are reported, by that goroutine, when the
// last of them is write-locked for the first time, once. TryRLock, like
// TryLock and a timed call with d <= 0, adds no edge into the lock it
// takes (locks taken while holding it are ordered after it), and an
// RWMonitor's re-entry (a reader reading again, the writer reading) adds
// none. Reports (rlock or lock in the scenario
// lines), Dump and WriteDOT's order edges say which access each side had.
//
// # The order model
//
// Order mode treats the program's locks as if they were meant to be
// partially ordered: a < b means "a must be acquired before b". As in
// lockdep, an acquisition of b records the edge a -> b from the nearest
// lock a its goroutine holds (and from any lock above that one taken by
// TryLock or TryRLock, or held for reading and never write-locked), with
// the stacks where both were acquired; transitivity says
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
// taken while holding it do. A LockContext, or a LockTimeout (or
// RLockTimeout) with a positive timeout, can block, so it adds edges like
// Lock (or RLock).
//
// # Reports and what happens
//
// A report is a *Report value with a Kind (Deadlock, LockOrder or
// WaitTimeout), the cycle as Steps (goroutine, lock held and where the
// goroutine took it, lock waited for or acquired next, stack), and a
// String method that prints it in the manner of jstack's "Found one
// Java-level deadlock" and lockdep's "possible circular locking dependency
// detected". Locks are named by SetName, else by type and address and a
// site: in Order mode the lock's first acquisition ("first locked at"); in
// Cycles mode, which does nothing on the fast path, the first Lock that
// had to wait for it ("first waited for at"). Stacks are file:line frames
// with the detector's, the locks' and the runtime's own frames trimmed.
//
// Where each goroutine took the lock it holds is known in Order mode,
// which records the stack of an acquisition when it records it anyway:
// the lock's first acquisition, its first by a goroutine holding nothing,
// and each acquisition whose chain of held locks is new (capturing a
// stack costs microseconds: too much for every acquisition). In
// Cycles mode it is not recorded, and a Deadlock report says so, and
// suggests LOCKSMITH_DETECT=order or SetName.
//
// Each problem is reported once. Two reports of one kind whose steps are
// at the same call sites (the first user frame of each step's stack:
// where each edge's second lock was taken, where each goroutine waits)
// are one problem, whatever the lock instances and goroutines: one
// inversion made over a hundred objects is one report, and a deadlock
// that recurs in a retry loop is one report. Report.Seen counts the
// occurrences, lock instances and goroutines, and goes on counting after
// the report; String and Dump print the counts. Problems are remembered
// per reporter: Configure with WithReporter starts afresh.
//
//   - Deadlock: the goroutine that would close the cycle does not park. Lock
//     panics with a *DeadlockError (errors.Is(err, ErrDeadlock)); its
//     deferred Unlocks run and free the others, as a database aborts one
//     transaction of a deadlocked set. LockContext returns the error
//     instead, and LockTimeout returns false, without the lock, so the
//     caller can release what it holds, back off and retry. A Cond wait
//     whose reacquire would close a cycle panics the same way, and returns
//     without holding the lock; the Unlocks the caller deferred for the
//     holds it lost panic with an error that also matches ErrDeadlock, so
//     that recover() in the Lock; defer Unlock; Wait idiom sees the
//     deadlock (see condvar.Cond.Wait).
//     The report is delivered to the reporter (printed, by default) too.
//   - LockOrder: the report goes to the reporter in the goroutine whose
//     acquisition closed the inversion, once it has taken the lock. In a
//     test binary (testing.Testing()) the default reporter is
//     PanicReporter, which panics there with a *LockOrderError
//     (errors.Is(err, ErrLockOrder)) whose message carries the report, so
//     that go test fails, with the test's name and the report (in a
//     goroutine the test started, the panic ends the test binary, as any
//     such panic does, and its stack's "created by" line names the test);
//     the acquisition is undone first, so the Lock panics without the lock.
//     Elsewhere it is PrintReporter, which prints the report to stderr, and
//     execution continues.
//   - WaitTimeout: a warning, printed (by either predefined reporter) by
//     the watchdog; execution continues.
//
// WithReporter sends every report to a function instead: PanicReporter,
// PrintReporter or one of the program's own. The environment variable
// LOCKSMITH_DETECT_REPORT (panic or print) chooses the default reporter
// without code changes; a reporter set with WithReporter takes precedence,
// and any other value stops the program at start-up. For a Deadlock,
// after the reporter returns, the goroutine closing the cycle still panics
// (or LockContext still returns the error): waiting on would block it
// forever. The library never calls os.Exit.
//
// # In tests
//
// There are two ways to run the detector over a test suite. Without code
// changes:
//
//	LOCKSMITH_DETECT=order go test ./...
//
// fails the test that makes an inversion (the default reporter panics in
// it; as any panic in a test, that ends the package's test binary, and
// the tests after it do not run). Or in a test, with the reporter of the
// test's choosing:
//
//	defer detect.Configure(detect.WithMode(detect.Order), detect.WithReporter(func(r *detect.Report) {
//		t.Errorf("%v", r)
//	}))()
//
// which fails the test and lets it go on. (The reporter runs on the
// goroutine that found the problem, which, for a wait timeout, is the
// watchdog's: use t.Errorf there, not t.Fatalf.)
//
// A deadlock through Lock is a panic: unless the program recovers it, it
// ends the test binary, as any panic does, with the report. A program
// that must go on after a deadlock uses LockContext, which returns the
// *DeadlockError instead; the caller then releases what it holds and
// retries.
//
// Waiting for a locksmith lock shows in the block profile, not in the
// mutex profile: a waiter parks on a channel, as a goroutine blocked in
// select does, and the runtime's mutex profile records only sync.Mutex
// and sync.RWMutex. To see where goroutines wait:
//
//	go test -blockprofile block.out ./pkg
//	go tool pprof -top -cum block.out
//
// and in a program, runtime.SetBlockProfileRate(1) (or a larger rate, to
// sample) and the "block" profile of runtime/pprof or net/http/pprof.
// Waits show under internal/core.(*Lock).AcquireDeadline (an exclusive
// lock, or a read-write lock's writer queued behind another writer) or
// under internal/core.(*RWLock).rlockWait and drain (a reader behind a
// writer, a writer waiting for readers to leave), called from the user's
// Lock or RLock.
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
// Off and Cycles cost the same on the uncontended path. In Order mode an
// uncontended Lock/Unlock pair of a mutex.Mutex, through sync.Locker,
// measured 77.6 ns of CPU time against 9.0 ns for sync.Mutex's (8.6x; AMD
// EPYC, 2 vCPUs under load, Go 1.26.8):
//
//	go test -run '^$' -bench 'Mutex(Uncontended|Nested)Pair' ./bench/detectcost
//
// and the first nesting of two new locks (their metadata and first-lock
// sites, the new edge and its stacks) 2.9 us of CPU time and 2
// allocations, each lock's weak pointer (the locks' detection states
// come 15 to an allocation), and 2.0 us of wall time against 6.7 us for
// go-deadlock's in the same runs (medians of 6, 2 vCPUs heavily loaded:
// go test -run '^$' -bench OrderFirstNesting -benchtime 30000x ./detect,
// the mutex.Mutex/order row, and go test -run '^$' -bench
// MutexFirstNesting ./bench/detectcost). The stacks are taken by
// frame-pointer walks (internal/fpstack).
// Order mode's per-goroutine records
// live in a fixed table of 4096 slots (256 KiB, plus each goroutine's list
// of held locks), claimed by a goroutine when it takes its first lock and
// kept, idle, when it releases its last (any goroutine that finds no free
// slot may take an idle one), with sharded locked maps behind it for
// goroutines beyond what the table finds. A goroutine's first choice is one
// of 256 home slots, so that short-lived goroutines, one after another,
// reuse a few hundred slots. Under the race detector a short-lived
// goroutine that nests two locks along a known edge makes 16 atomic
// operations in Order mode beyond what it makes in Cycles mode, 8 loads,
// 4 stores and 4 CompareAndSwaps (about 100, 140 and 300 ns each in a new
// goroutine, AMD EPYC): for each Lock, the load of the lock's metadata,
// the marking of the goroutine's record busy (a load and a
// CompareAndSwap) and then not (a store), and the load of the lock's
// flags or the two loads that find the edge into it; for each Unlock, a
// CompareAndSwap and a store around the change of the record; and once,
// the load that tells the goroutine it has no record elsewhere. Records
// name locks weakly; those
// of goroutines that exited holding locks, or released them while Order
// mode was off, are dropped at the next garbage collection once their
// locks are collected or no longer held by them, and slots left empty or
// idle are freed then.
// The detector never keeps a lock alive: a lock's metadata is dropped, with
// its graph edges, when the lock is garbage collected; the order the lock
// carried between its neighbours is kept as direct edges between them
// (up to 4096 per collected lock), unless it is a read-write lock never
// write-locked, which ordered nothing (see Read-write locks).
// BENCHMARKS.md, at the root of the repository, has measured figures.
package detect
