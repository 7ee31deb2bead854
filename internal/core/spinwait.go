package core

import (
	"runtime"
)

var ncpu = runtime.NumCPU()

// spin makes a few bounded attempts to take the lock for g before it
// parks, clearing the flags in clear when it does (flagWoken for a woken
// waiter). It spins as sync.Mutex does, with the runtime's own primitives
// (spin.go): while the lock is held and the runtime says spinning makes
// sense (more than one CPU, no idle processor, nothing else queued on
// this one), it waits a round of 30 PAUSE instructions, then looks again
// and tries to take the lock if it is free; it gives up after spinRounds
// rounds.
//
// A round is long (1.5-2 µs on the AMD EPYC virtual machine, whose PAUSE
// is slow), so a waiter lets the holder run on alone, taking and
// releasing the lock many times, instead of taking every release from
// it; each hand-off between goroutines costs the next holder the cache
// lines of the lock and of the data it guards. Rejected alternatives,
// with two goroutines on 2 cores taking turns at a ~100 ns critical
// section and ~25 ns between (both running: the process run SCHED_FIFO,
// so that other processes could not take a core from it; three runs of
// 40 rounds of 20,000 operations against sync.Mutex, medians):
// polling the state word 30 times a round, 4 rounds, 0.81-0.84x
// sync.Mutex's throughput at 1.13-1.17x its CPU per operation (hand-offs
// on almost every operation, and a park every ~80 operations); sync's 4
// rounds, 0.86-0.90x at 1.07-1.15x; 8 rounds, and a woken waiter
// spinning again before it queues again (acquireDeadline), as here,
// 0.92-0.98x at 1.06-1.10x, with a third of the parks of the polling. A park here costs
// more than sync.Mutex's (a waiter and its channel, and the registration
// that deadlock detection walks), which is why this spins twice as many
// rounds; a waiter for a lock held long spends that much more CPU before
// it parks.
func spin(l *Lock, g int64, clear int64) bool {
	for i := 0; i < spinRounds; i++ {
		if l.state.Load()>>ownerShift != 0 {
			if !runtime_canSpin(0) {
				return false
			}
			runtime_doSpin()
		}
		if l.state.Load()&flagStarving != 0 {
			return false
		}
		if l.tryAcquire(g, clear) {
			return true
		}
	}
	return false
}

// spinRounds is how many rounds spin makes before it gives up.
const spinRounds = 8

// spinUntil makes a few bounded looks at cond before the caller parks, as
// spin does for Lock: critical sections are often shorter than a park and
// a wakeup. On a single CPU it does not spin.
//
// One round of 30 looks and one yield, not spin's four rounds: readers
// and writers of a read-mostly lock wait here far more often than a
// Mutex's callers spin, and every further yielding round kept a second
// CPU busy for nothing. In the read-mostly mixes with 4 and 8 goroutines
// (90 % reads, ~100 ns inside; AMD EPYC, 2 cores, Go 1.26.8; `go run
// ./bench/cmd/lockbench -workload rw`), four rounds cost 1.6-2.0x
// sync.RWMutex's CPU per operation on 1.8 cores; one round costs 1.16-1.29x
// on 1.2 cores at 0.91x its throughput. Parking at once (no yield) cut the
// CPU less and the throughput to 0.67x: a park costs more than a yield.
func spinUntil(cond func() bool) bool {
	if ncpu == 1 {
		return false
	}
	for range 30 {
		if cond() {
			return true
		}
	}
	runtime.Gosched()
	return cond()
}
