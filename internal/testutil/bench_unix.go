//go:build unix

package testutil

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/internal/cputime"
)

// A PairCase is one lock under an uncontended benchmark. Pairs does n
// Lock/Unlock pairs (or whatever the case measures) calling the lock's
// methods on its concrete type, as users call a lock: sync.Mutex's Lock
// then inlines its fast path, as it does in a program, and nothing adds an
// interface call that the lock would not pay. Write it as a closure over
// a concrete lock (see SyncMutexPairs); a generic helper over the lock
// type would call through a dictionary instead.
type PairCase struct {
	Name  string
	Pairs func(n int)
}

// SyncMutexPairs returns the Pairs of sync.Mutex m.
func SyncMutexPairs(m *sync.Mutex) func(int) {
	return func(n int) {
		for range n {
			m.Lock()
			m.Unlock()
		}
	}
}

// FloorPairs returns the Pairs of the floor lock l.
func FloorPairs(l *FloorLock) func(int) {
	return func(n int) {
		for range n {
			l.Lock()
			l.Unlock()
		}
	}
}

// BaselinePairs returns the two cases every uncontended benchmark starts
// with: sync.Mutex, and the floor lock, the least that owner tracking
// costs (see FloorLock).
func BaselinePairs() []PairCase {
	return []PairCase{
		{Name: "sync.Mutex", Pairs: SyncMutexPairs(new(sync.Mutex))},
		{Name: "floor.GoidLock", Pairs: FloorPairs(new(FloorLock))},
	}
}

// BenchPairs runs each case as a sub-benchmark, b.N pairs in one call,
// and reports cpu-ns/op besides ns/op: the process's CPU time per pair.
// Only the benchmark's goroutine runs, so that is its time on a CPU,
// which, unlike real time, other processes on a shared machine do not
// inflate; compare the locks on it there.
func BenchPairs(b *testing.B, cases []PairCase) {
	for _, c := range cases {
		b.Run(c.Name, func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cputime.Total()
			c.Pairs(b.N)
			cpu := cputime.Total() - cpu0
			b.StopTimer()
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// A LockCase is one lock under a contended benchmark. The goroutines call
// Lock and Unlock through the sync.Locker interface: one indirect call is
// lost in the 100 ns of work of each critical section.
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
			cpu0, t0 := cputime.Total(), time.Now()
			close(start)
			wg.Wait()
			wall, cpu := time.Since(t0), cputime.Total()-cpu0
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

// RWLocker is the part of a read-write lock the mixed benchmarks use.
type RWLocker interface {
	sync.Locker
	RLock()
	RUnlock()
}

// An RWCase is one read-write lock under benchmark; like LockCase, every
// case goes through the same helper and the same interface calls.
type RWCase struct {
	Name string
	New  func() RWLocker
}

// BenchRWMix runs goroutines goroutines sharing each case's lock; each
// operation is a read (RLock, Work reading the shared state, RUnlock) with
// probability readPermille/1000 and otherwise a write (Lock, Work updating
// it, Unlock). It reports throughput and the process's CPU time (user+sys)
// per operation.
func BenchRWMix(b *testing.B, goroutines, readPermille int, cases []RWCase) {
	for _, c := range cases {
		b.Run(c.Name, func(b *testing.B) {
			l := c.New()
			var shared uint64 // guarded by l
			var sink atomic.Uint64
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
					defer func() {
						if v := recover(); v != nil {
							b.Errorf("lock panicked: %v", v)
						}
					}()
					rng := uint64(g)*0x9e3779b97f4a7c15 + 1
					var local uint64
					<-start
					for range n {
						rng ^= rng << 13
						rng ^= rng >> 7
						rng ^= rng << 17
						if int(rng%1000) < readPermille {
							l.RLock()
							local += Work(shared)
							l.RUnlock()
						} else {
							l.Lock()
							shared = Work(shared)
							l.Unlock()
						}
					}
					sink.Add(local)
				}()
			}
			b.ResetTimer()
			cpu0, t0 := cputime.Total(), time.Now()
			close(start)
			wg.Wait()
			wall, cpu := time.Since(t0), cputime.Total()-cpu0
			b.StopTimer()
			b.ReportMetric(float64(b.N)/wall.Seconds(), "ops/s")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// ReportCPU reports the process's CPU time per operation since cpu0 (a
// CPUTime reading taken before the loop). For a single goroutine on a
// shared machine it is steadier than the wall time, which includes the
// time the goroutine was not running.
func ReportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64((cputime.Total()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
