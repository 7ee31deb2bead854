//go:build unix

package testutil

import (
	"sync"
	"syscall"
	"testing"
	"time"
)

// A LockCase is one lock under benchmark. Every case goes through the same
// helper and calls Lock and Unlock through the sync.Locker interface, so
// sync.Mutex pays the same dynamic dispatch as the others and the ratios
// compare the locks, not the call sites.
type LockCase struct {
	Name string
	// Setup returns the lock and a function that undoes whatever Setup
	// did; both are called on the benchmark's goroutine.
	Setup func() (l sync.Locker, teardown func())
}

// Plain is a Setup for a lock that needs none.
func Plain(l sync.Locker) func() (sync.Locker, func()) {
	return func() (sync.Locker, func()) { return l, func() {} }
}

// BenchPair measures one Lock/Unlock pair by a single goroutine.
func BenchPair(b *testing.B, cases []LockCase) {
	for _, c := range cases {
		b.Run(c.Name, func(b *testing.B) {
			l, teardown := c.Setup()
			defer teardown()
			b.ReportAllocs()
			for b.Loop() {
				l.Lock()
				l.Unlock()
			}
		})
	}
}

// BenchContended runs goroutines goroutines sharing each case's lock, each
// doing Work inside it, and reports throughput and the process's CPU time
// (user+sys) per operation.
func BenchContended(b *testing.B, goroutines int, cases []LockCase) {
	for _, c := range cases {
		b.Run(c.Name, func(b *testing.B) {
			l, teardown := c.Setup()
			defer teardown()
			var shared uint64 // guarded by l
			var wg sync.WaitGroup
			start := make(chan struct{})
			for g := range goroutines {
				n := b.N / goroutines
				if g < b.N%goroutines {
					n++
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					// A panic in Lock fails the benchmark without
					// killing the binary; this goroutine stops early.
					defer func() {
						if v := recover(); v != nil {
							b.Errorf("Lock panicked: %v", v)
						}
					}()
					<-start
					for range n {
						l.Lock()
						shared = Work(shared)
						l.Unlock()
					}
				}()
			}
			b.ResetTimer()
			cpu0, t0 := CPUTime(), time.Now()
			close(start)
			wg.Wait()
			wall, cpu := time.Since(t0), CPUTime()-cpu0
			b.StopTimer()
			b.ReportMetric(float64(b.N)/wall.Seconds(), "ops/s")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// workRounds makes Work take roughly 100 ns on a current x86-64 core: a
// chain of dependent multiply-adds the compiler cannot fold away.
const workRounds = 80

// Work is the contended benchmarks' critical section.
//
//go:noinline
func Work(x uint64) uint64 {
	for i := range uint64(workRounds) {
		x = x*6364136223846793005 + i
	}
	return x
}

// CPUTime returns the process's user plus system CPU time.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
