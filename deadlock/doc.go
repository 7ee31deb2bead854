// Package deadlock is go-deadlock's API (github.com/sasha-s/go-deadlock)
// over locksmith's locks: for code that is correct under sync, changing
// the import path is the whole migration.
//
// Mutex and RWMutex are drop-in replacements for sync's, over a
// mutex.Mutex and a mutex.RWMutex that package detect watches; Opts has
// every field of go-deadlock's, with its defaults; Cond, NewCond, Locker,
// Once, Pool, WaitGroup and Map pass sync through, as go-deadlock's do.
//
// # Opts and the detector
//
// Opts become one detect.Configure call: Disable is detect.Off;
// DisableLockOrderDetection is detect.Cycles (actual deadlocks are still
// refused as they form); otherwise detect.Order, lock-order checking of
// cycles of any length. DeadlockTimeout is detect.WithWaitTimeout (0 if
// <= 0), and the reporter writes each report to LogBuf, headed
// "POTENTIAL DEADLOCK:", then calls OnPotentialDeadlock. Every Lock, RLock
// and TryLock compares Disable, DisableLockOrderDetection and
// DeadlockTimeout with the values it last applied (three loads and an
// atomic load), and a change, made at any time, replaces the call by a
// new one. LogBuf, OnPotentialDeadlock and PrintAllCurrentGoroutines are
// read as each report is made. Nothing is configured before the first
// lock call of this package's locks.
//
// The detector's configuration is process-wide, so Opts apply to every
// locksmith lock of the program (a mutex.Mutex as well), and they override
// LOCKSMITH_DETECT; the default OnPotentialDeadlock follows
// LOCKSMITH_DETECT_REPORT as detect's default reporter does. They are one
// layer of
// detect.Configure's: a change of Opts makes the call again, so its
// options then apply over those of Configure calls made before.
//
// # Differences from go-deadlock
//
// Where go-deadlock's behaviour conflicts with locksmith's, this package
// chooses as follows (docs/deadlock.md gives the reasons):
//
//	case                          | go-deadlock                                  | this package
//	------------------------------+----------------------------------------------+-----------------------------------------------
//	OnPotentialDeadlock default   | os.Exit(2) on any report                     | never exits: a lock-order inversion panics
//	                              |                                              | (*detect.LockOrderError) in the goroutine that
//	                              |                                              | made it in a test binary, else is printed; long
//	                              |                                              | waits are warnings
//	actual deadlock (a cycle)     | reported (pairs only) or after the timeout;  | the Lock closing it panics with a
//	                              | then hangs unless the handler exits          | *detect.DeadlockError after the report, at once
//	lock-order cycle of 3+ locks  | not seen (pairs only)                        | reported
//	TryLock then the reverse order| reported                                     | not reported (a TryLock cannot block)
//	the same problem again        | reported each time                           | reported once (detect.Report.Seen counts)
//	Unlock by another goroutine   | allowed                                      | allowed; the lock leaves detection for good
//	Lock by the holder (hand-off) | "Recursive locking" at once: a false report  | waits, as sync does, for another goroutine's
//	                              | when another goroutine is to unlock          | Unlock; reported after DeadlockTimeout
//	recursive RLock, upgrade      | reported at once, then may hang              | panics with mutex.ErrRecursiveLock at once
//	RUnlock by another goroutine  | allowed                                      | panics with mutex.ErrNotOwner
//	unlock of an unlocked lock    | sync's fatal error                           | panics with mutex.ErrNotOwner (after a
//	                              |                                              | hand-off, sync's fatal error)
//	MaxMapSize, TimerPool         | order map reset when full; timer pooling     | accepted, no effect
//
// A recursive Lock, by the goroutine that holds the lock, cannot be told
// from the start of a hand-off (lock, then wait for another goroutine to
// unlock): sync.Mutex allows both, and so does Mutex here, instead of
// mutex.Mutex's panic. It waits; if no Unlock comes within
// Opts.DeadlockTimeout it is reported, and goes on waiting, as sync would.
//
// The first Unlock of a lock held by another goroutine shows a lock used
// as a semaphore: nobody owns it, so detection has nothing to follow, and
// the lock continues as a sync lock, outside detection (a holder's Lock
// waiting for that Unlock then takes the sync lock). Before that, detection sees it as held by the
// goroutine that locked it. (mutex.Mutex cannot be released by another
// goroutine than its holder: the one it leaves stays held by that
// goroutine in detect.Dump.)
package deadlock
