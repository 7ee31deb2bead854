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
// A round is long (PAUSE is slow on some machines, virtual ones among
// them), so a waiter lets the holder run on alone, taking and releasing
// the lock many times, instead of taking every release from it; each
// hand-off between goroutines costs the next holder the cache lines of
// the lock and of the data it guards. Rejected alternatives, with two
// goroutines on 2 cores taking turns at a short critical section, against
// sync.Mutex in the same rounds (BenchmarkMutexContendedRatio in
// mutex/bench_test.go): polling the state word 30 times a round, 4
// rounds, which loses the most throughput to sync.Mutex at the most CPU
// per operation (hand-offs on almost every operation, and the most
// parks); sync's 4 rounds, which does better; 8 rounds, and a woken
// waiter spinning again before it queues again (acquireDeadline), as
// here, closest to sync.Mutex on both, with a fraction of the parks of
// the polling. A park here costs more than sync.Mutex's (a waiter and its
// channel, and the registration that deadlock detection walks), which is
// why this spins twice as many rounds; a waiter for a lock held long
// spends that much more CPU before it parks.
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
// One round of 30 looks and one yield, not rounds like spin's
// (spinRounds, eight of them, each of 30 PAUSEs once the runtime allows
// it): readers and writers of a read-mostly lock wait here far more often
// than a Mutex's callers spin, and every further yielding round kept a
// second CPU busy for nothing. In the read-mostly mixes with 4 and 8
// goroutines (`go run ./bench/cmd/lockbench -workload rw`), four rounds
// cost far more of sync.RWMutex's CPU per operation, on nearly two cores,
// than one round, which stays close to sync.RWMutex's CPU and throughput.
// Parking at once (no yield) cut the CPU less and lost much of the
// throughput: a park costs more than a yield.
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
