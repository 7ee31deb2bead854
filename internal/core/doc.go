// Package core is the machinery shared by the public lock packages. By file:
//
//   - class.go: Class, a lock type as reports name it, and the four classes;
//   - lock.go: the lock word that holds the owner's goroutine ID behind
//     mutex.Mutex and monitor.Monitor (and an RWLock's writers): its fast,
//     try and release paths, starvation hand-off and wakeups;
//   - acquire.go: a Lock's slow acquire, and how a waiter gives up;
//   - park.go: the waiter, its tokens (channel or semaphore), the deadline
//     timer of a call, and how a callback cancels a queued waiter;
//   - parker.go: the one park protocol of every wait (registration, wait
//     site, cycle check, deadline, the park itself), with a parkQueue per
//     queue for what differs;
//   - queue.go: a Lock's FIFO of parked waiters (waitList);
//   - durable.go: the bubble rules of a wait: who may take a lock while
//     durable waiters are queued, when a waiter may park durably, and the
//     check that nobody wakes a durable waiter of another bubble;
//   - spinwait.go: the bounded spinning before a park (spin, spinUntil);
//   - spin.go: the runtime's spinning primitives that spinwait.go uses;
//   - fast.go: what the assembly fast paths of mutex and monitor read (the
//     state word's offsets, the fast word that Order mode clears);
//   - rwlock.go: the read-write lock behind mutex.RWMutex and
//     monitor.RWMonitor: its state word, reader slots, fast paths, the
//     read release and the write unlock;
//   - rwread.go: a first-time reader's slow path and the reader queue;
//   - rwdrain.go: the writer's slow path: the writer lock, then the wait
//     for readers to leave (drain), and their wakeup of it;
//   - rwinspect.go: what tests, Dump and the detector read of an RWLock;
//   - rwhooks.go: the Order-mode hooks of an RWLock (AcquiredRW, ReleasedRW);
//   - bubble.go: which testing/synctest bubble a goroutine runs in, and so
//     whether a waiter may park durably;
//   - lost.go: holds lost when a condition wait's reacquire is refused;
//   - clock.go: the detector's clock, real time also inside a bubble;
//   - mode.go: the detection mode and the Engine hooks package detect installs;
//   - meta.go: a lock's identity for detection (Meta, held weakly);
//   - pointer.go: Pointer, an atomic pointer without checkptr's cost;
//   - site.go: the size of a recorded wait site;
//   - waits.go: the registry of blocked goroutines;
//   - condwaits.go: the registry of goroutines parked in Cond waits, and
//     its table for the waits not registered in their Cond;
//   - condslots.go: a Cond's own registration of its ticket waits, and
//     the weak list of Conds through which the watchdog reads them;
//   - cycles.go: the wait-for walk that finds deadlocks, and its Hops;
//   - exited.go: the check that fails a wait whose holder has exited;
//   - adapter.go: how condvar and detect see inside a lock of another package;
//   - errors.go: the shared sentinels and the misuse error type, under
//     the engine's names for package misuse's (the one public package
//     the engine imports, so that its panic values are a type users name).
//
// Nothing here is public API; the public packages wrap it.
package core
