// Package stress runs every locksmith primitive at once, under load, and
// checks the invariants a lock library must keep whatever the
// interleaving: the engine behind the bounded stress tests (go test) and
// the soak command (lockbench -soak).
//
// Run starts rounds of goroutines that mix mutex.Mutex (Lock, TryLock,
// LockContext cancelled at random points, misuse), monitor.Monitor
// (re-entry to random depths, Do with panics), mutex.RWMutex and
// monitor.RWMonitor (readers and writers by every acquisition method,
// re-entry, downgrade, misuse), condvar.Cond on each lock
// kind (*sync.Mutex, *mutex.Mutex, *monitor.Monitor) with Wait, WaitTimeout,
// WaitContext and WaitWhile racing Signal, Broadcast, timeouts and
// cancellations, nested locks taken in one consistent order, and sorts
// whose comparator read-locks both items (read-only lock-order cycles);
// with Config.Bubble, also one Mutex, Monitor, Cond, RWMutex and RWMonitor
// shared between goroutines outside any testing/synctest bubble and those
// of two bubbles, and with Config.Strand, readers stranded in a bubble
// that deadlocked behind a writer outside. Config.SwitchModes switches the detection mode while
// locks are held and waited for. Each round
// uses fresh locks, so that the detector's memory for the old ones can be
// reclaimed. What it checks is listed on Run; what it finds wrong is
// returned as anomalies, never printed or panicked, so that a caller
// decides what a failure means.
package stress
