// Package core is the machinery shared by the public lock packages. By file:
//
//   - lock.go: the lock word that holds the owner's goroutine ID, and the
//     FIFO queue of parked waiters behind mutex.Mutex and monitor.Monitor
//     (and an RWLock's writers); Class, a lock type as reports name it;
//   - fast.go: what the assembly fast paths of mutex and monitor read (the
//     state word's offsets, the fast word that Order mode clears);
//   - rwlock.go: the read-write lock behind mutex.RWMutex and
//     monitor.RWMonitor;
//   - bubble.go: which testing/synctest bubble a goroutine runs in, and so
//     whether a waiter may park durably;
//   - lost.go: holds lost when a condition wait's reacquire is refused;
//   - clock.go: the detector's clock, real time also inside a bubble;
//   - mode.go: the detection mode and the Engine hooks package detect installs;
//   - meta.go: a lock's identity for detection (Meta, held weakly);
//   - waits.go: the registry of blocked goroutines;
//   - cycles.go: the wait-for walk that finds deadlocks, and its Hops;
//   - adapter.go: how condvar and detect see inside a lock of another package;
//   - errors.go: the shared sentinels and the misuse error type.
//
// Nothing here is public API; the public packages wrap it.
package core
