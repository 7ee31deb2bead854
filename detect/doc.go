// Package detect finds deadlocks among locksmith locks (mutex.Mutex,
// monitor.Monitor, mutex.RWMutex, monitor.RWMonitor, and the reacquire at
// the end of a condvar.Cond wait): actual deadlocks the moment they form,
// and, in Order mode, lock-order inversions before they bite.
//
// # Modes
//
//   - Off: no checks and no reports. The locks' own owner checks
//     (recursive locking, unlock by a non-owner) still hold.
//   - Cycles (the default, except in test binaries built without -race):
//     when a goroutine is about to park on a lock,
//     the detector follows the wait-for chain (the lock, its owner, the
//     lock that owner waits for, and so on); if it comes back to the
//     caller, the deadlock exists now. A cycle is reported only if a
//     second walk finds every edge unchanged, so a report is never a
//     false positive. An uncontended Lock and Unlock do no extra work.
//   - Order (the default in test binaries built without -race): Cycles,
//     plus lock-order validation in the manner of Linux's lockdep, plus
//     wait-timeout reports (DefaultOrderWaitTimeout unless WithWaitTimeout
//     says otherwise). A fresh lock's first acquisitions, alone or nested
//     under one other, allocate nothing on the calling goroutine.
//     Under -race a test binary defaults to Cycles, because Order mode's
//     lock-order graph orders goroutines that nest locks, which could
//     hide a data race between them.
//
// The mode is read at start-up from LOCKSMITH_DETECT (off, cycles or
// order; also Off, OFF and so on), so that
//
//	LOCKSMITH_DETECT=order go run ./cmd/server
//
// turns full checking on without code changes; Configure(WithMode(...))
// changes it at run time. Any other value stops the program at start-up
// with a panic naming the valid ones. A run of go test with another
// LOCKSMITH_DETECT, LOCKSMITH_DETECT_REPORT or LOCKSMITH_WAIT_TIMEOUT is
// never served the cached result of the previous one.
//
// # The order model
//
// Order mode treats locks as meant to be partially ordered: a < b means
// "a must be acquired before b". Taking b while holding a records a -> b,
// with the stacks where both were taken. An acquisition that would close
// a cycle (a < b < ... < a) is reported as a possible deadlock even
// though this run did not hang: another interleaving can. Both halves of
// an inversion may run in one goroutine or in several. Re-entry into a
// Monitor, and a TryLock or TryRLock, add no edge into the lock taken (it
// cannot block); LockContext and a LockTimeout with a positive timeout
// add edges like Lock.
//
// A read waits only for a writer, so a cycle through read-write locks is
// reported only once each of its locks has been write-locked somewhere in
// Order mode (a Mutex or Monitor always counts): R(A) then R(B) in one
// goroutine and R(B) then R(A) in another is reported, once, when the
// last of A and B is first write-locked. Only a write-lock that can queue
// counts (Lock, LockContext, LockTimeout with a positive timeout), or a
// write hold under which its goroutine takes another lock: a TryLock, or
// a LockTimeout of zero or less, never waits behind the readers, so it
// holds out no reader that the cycle needs. Cycles mode sees every read
// holder, and finds the cycles that only writer preference closes.
//
// # Reports
//
// A report is a *Report with a Kind, the cycle as Steps (goroutine, lock
// held and where it was taken, lock wanted next, stack), and a String
// method that prints it as jstack and lockdep do. Locks are named by
// SetName, else by type, address and the site of their first acquisition
// (Order mode) or first wait (Cycles mode). Where each goroutine took the
// lock it holds is recorded in every mode, as one PC kept by the lock
// for its holder, or beside its reader slot for a reader (the purego
// build and Go 1.22 record it on the fast paths in Order mode only, in
// Off and Cycles modes only when the acquisition waited), and in Order
// mode also as a stack when the acquisition was new; a report's first
// line names its locks the same way. Each problem is reported
// once: reports whose steps are at the same call sites are one problem,
// whatever the lock instances and goroutines, and Report.Seen counts the
// occurrences.
//
//   - Deadlock: the goroutine that would close the cycle does not park.
//     Lock panics with a *DeadlockError (errors.Is(err, ErrDeadlock)),
//     so its deferred Unlocks free the others; LockContext returns the
//     error and LockTimeout returns false, without the lock, so that the
//     caller can release what it holds and retry. The default reporters
//     print such a refusal, which the caller handles, as one line
//     (Report.BackedOff, Report.Line), and a Lock's in full. A Cond
//     wait whose reacquire would close a cycle panics the same way (see
//     condvar.Cond.Wait). A wait for a lock whose holder has exited
//     holding it (a goroutine that returned without Unlock, a timer
//     callback that returns with the lock held, a read lock never
//     released) can never end either, since only the holder may unlock:
//     it fails the same way, in Cycles and Order modes, within a second
//     of the later of its start and the holder's exit (more in a program
//     of over 2,000 goroutines: docs/detection.md), and the report
//     names the holder, marked Exited, and in Order mode where it took
//     the lock. Inside a testing/synctest bubble, such a wait among the
//     bubble's own goroutines is durably blocked instead, and synctest
//     reports the bubble's deadlock.
//   - LockOrder: reported in the goroutine whose acquisition closed the
//     inversion, once it has the lock. PanicReporter, the default in a
//     test binary, panics there with a *LockOrderError (errors.Is(err,
//     ErrLockOrder)), after undoing the acquisition, so that go test
//     fails with the report and the test's name; PrintReporter, the
//     default elsewhere, prints it to stderr and execution continues.
//   - WaitTimeout: a warning, printed by the watchdog, naming the
//     goroutine blocked too long, the holder and the holder's stack.
//   - CondWait: a warning, printed by the watchdog, when a goroutine's
//     condvar.Cond wait (or Monitor wait) has gone unsignalled for the
//     wait timeout while another goroutine has waited as long for a lock
//     the Cond waiter holds, directly or behind a writer queued on a
//     read-locked lock (the nested-monitor lockout), or for the Cond's own
//     lock. It names the Cond, its lock, what the Cond waiter holds and
//     the goroutines stuck behind it, with their stacks. Such a lockout is
//     never certain when it forms (a Signal may come from any goroutine,
//     also one holding no lock), so it is reported only through the wait
//     timeout; Cond waits are watched only while one is set. A Cond wait
//     unsignalled for the wait timeout in a test's own goroutine (one that
//     runs testing.tRunner, or that called VerifyNone) is reported too,
//     whoever waits for its locks: the test cannot end. An idle worker's
//     Cond wait, however long, is not.
//   - StuckWaiter: a goroutine still blocked on a lock when its test
//     ended (VerifyNone) or the run did (VerifyTestMain), with the
//     holder and what the holder is doing; or, for VerifyNone while a
//     wait timeout is set, a goroutine of the test still in a Cond wait,
//     with the Cond and its lock.
//   - RecoveredMisuse: a recursive Lock or RLock, or a read-to-write
//     upgrade, whose contract panic is raised inside a String, Error,
//     Format or GoString method that fmt calls, or a function a
//     text/template calls: they recover the panic (fmt prints it into
//     the string), which with package sync would be a hang for all to
//     see. In Cycles and Order modes the panic is delivered as this
//     report first, then raised as before. Only the panic path reads the
//     stack that tells.
//
// WithReporter sends every report to a function of the program's own
// instead, process-wide; LOCKSMITH_DETECT_REPORT (panic or print) chooses
// the default without code changes.
//
// # In tests
//
// In a test binary the wait timeout is on in Cycles and Order modes
// (DefaultTestWaitTimeout; LOCKSMITH_WAIT_TIMEOUT sets another). Two
// helpers, one line each, make every finding fail the test that made it
// while the run goes on:
//
//	func TestMain(m *testing.M) { detect.VerifyTestMain(m) }
//
//	func TestTransfer(t *testing.T) {
//		detect.VerifyNone(t)
//		...
//	}
//
// VerifyNone claims for t the findings of the test's goroutine, of the
// goroutines it starts and of its subtests, and reports, when t ends, its
// goroutines still blocked on a lock; VerifyTestMain reports what no test
// claimed and the goroutines still blocked when the tests are done, and
// fails the package. Without either, the default reporter's panic ends
// the test binary at the first inversion or wait timeout, as any panic
// in a test does.
// The library never calls os.Exit, except in VerifyTestMain, which
// exits with the tests' status as goleak.VerifyTestMain does.
//
// # Inspecting a program
//
// Dump prints every goroutine blocked on a locksmith lock and its owner,
// every goroutine in a Cond wait (while a wait timeout is set) with its
// Cond, the Cond's lock and the locks it holds, and in Order mode every
// lock each goroutine holds; WriteDOT writes the
// lock-order graph and the wait-for edges for Graphviz.
//
// Waiting for a locksmith lock shows in the block profile, not in the
// mutex profile (a waiter parks on a channel, as in select):
//
//	go test -blockprofile block.out ./pkg
//	go tool pprof -top -cum block.out
//
// The waits show under functions of locksmith's lock engine, which pprof
// lists with their package path: acquireDeadline for an exclusive lock's
// waits and those of a read-write lock's writer queued behind another
// writer (reached through AcquireDeadline for a Mutex or Monitor, and
// straight from LockDeadline for a writer), rlockWait for a reader behind
// a writer, and drain for a writer waiting for the readers to leave.
//
// # What it cannot find
//
// Only locksmith locks are seen: a hang through channels, sync.Mutex,
// sync.WaitGroup or a Cond whose Signal never comes is invisible to the
// wait-for walk, though a wait-timeout report names a goroutine blocked on
// a locksmith lock and its holder's stack, and a CondWait report a
// condvar.Cond wait that such a goroutine is stuck behind. Order mode finds inversions only
// between acquisitions that some run performed. A lock held by a goroutine
// that exited stays held for good (Go runs no code at goroutine exit):
// a wait for it fails as a Deadlock (above), and Dump and wait-timeout
// reports say that the holder has exited. The callbacks of a C thread into
// Go run as one goroutine, whose ID the runtime gives, once the thread has
// exited, to the callbacks of the next C thread: a lock left held by a
// callback of a thread that has exited counts as held by an exited
// goroutine (until a callback of another thread unlocks it, which the lock
// cannot refuse). A finalizer or cleanup that returns holding a lock leaves
// it to a goroutine of the runtime's that no dump lists between
// callbacks: that counts as exited too.
//
// What each mode costs, how Order mode keeps its graph, and what it keeps
// alive: docs/detection.md in the repository.
package detect
