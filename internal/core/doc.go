// Package core is the machinery shared by the public lock packages. By file:
//
//   - lock.go: the lock word that holds the owner's goroutine ID, and the
//     FIFO queue of parked waiters behind mutex.Mutex and monitor.Monitor;
//   - fast.go: the word the assembly fast paths take;
//   - rwlock.go: the read-write lock behind mutex.RWMutex and
//     monitor.RWMonitor;
//   - bubble.go: which testing/synctest bubble a goroutine runs in, and so
//     whether a waiter may park durably;
//   - lost.go: holds lost when a condition wait's reacquire is refused;
//   - clock.go: the detector's clock, real time also inside a bubble;
//   - mode.go: the detection mode and the Engine hooks package detect installs;
//   - meta.go: a lock's identity for detection (Meta, held weakly);
//   - waits.go: the registry of blocked goroutines;
//   - cycles.go: the wait-for walk that finds deadlocks;
//   - adapter.go: how condvar and detect see inside a lock of another package;
//   - errors.go: the shared sentinels and the misuse error type.
//
// Nothing here is public API; the public packages wrap it.
package core
