//go:build unix

package testutil

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/internal/testkit/cputime"
)

// A PairCase is one lock under an uncontended benchmark. Pairs does n
// Lock/Unlock pairs (or whatever the case measures) calling the lock's
// methods on its concrete type, as users call a lock: sync.Mutex's Lock
// then inlines its fast path, as it does in a program, and nothing adds an
// interface call that the lock would not pay. Write it as a closure over
// a concrete lock (see SyncMutexPairs); a generic helper over the lock
// type would call through a dictionary instead. The function that returns
// the closure is marked go:noinline: the compiler does not inline calls
// inside a closure whose enclosing function was itself inlined into its
// caller, so without the mark Lock and Unlock would be calls in the loop
// (check with go tool objdump).
type PairCase struct {
	Name  string
	Pairs func(n int)
}

// SyncMutexPairs returns the Pairs of sync.Mutex m.
//
//go:noinline
func SyncMutexPairs(m *sync.Mutex) func(int) {
	return func(n int) {
		for range n {
			m.Lock()
			m.Unlock()
		}
	}
}

// FloorPairs returns the Pairs of the floor lock l.
//
//go:noinline
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

// SyncRWReadPairs returns the read Pairs (RLock/RUnlock) of sync.RWMutex
// rw.
//
//go:noinline
func SyncRWReadPairs(rw *sync.RWMutex) func(int) {
	return func(n int) {
		for range n {
			rw.RLock()
			rw.RUnlock()
		}
	}
}

// SyncRWWritePairs returns the write Pairs (Lock/Unlock) of sync.RWMutex
// rw.
//
//go:noinline
func SyncRWWritePairs(rw *sync.RWMutex) func(int) {
	return func(n int) {
		for range n {
			rw.Lock()
			rw.Unlock()
		}
	}
}

// BenchPairs runs each case as a sub-benchmark with RunPairs.
func BenchPairs(b *testing.B, cases []PairCase) {
	for _, c := range cases {
		b.Run(c.Name, func(b *testing.B) { RunPairs(b, c.Pairs) })
	}
}

// RunPairs does b.N pairs in one call of pairs and reports allocs/op and
// cpu-ns/op besides ns/op: the process's CPU time per pair. Only the
// benchmark's goroutine runs, so that is its time on a CPU, which, unlike
// real time, other processes on a shared machine do not inflate; compare
// the locks on it there. Whatever pairs needs set up (readers holding the
// lock, a first hold to re-enter) is done before the call, or inside it
// when it must be done by the goroutine that runs the pairs.
func RunPairs(b *testing.B, pairs func(n int)) {
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Total()
	pairs(b.N)
	cpu := cputime.Total() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// A LockCase is one lock under a contended benchmark. The goroutines call
// Lock and Unlock through the sync.Locker interface: one indirect call is
// lost in the 100 ns of work of each critical section.
type LockCase struct {
	Name string
	Lock sync.Locker
}

// contendedGoroutines are the goroutine counts of the contended and mixed
// benchmarks, one sub-benchmark each.
var contendedGoroutines = []int{2, 4, 8}

// BenchContended runs 2, 4 and 8 goroutines sharing each case's lock, each
// doing Work inside it, and reports throughput and the process's CPU time
// (user+sys) per operation.
func BenchContended(b *testing.B, cases []LockCase) {
	for _, g := range contendedGoroutines {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			for _, c := range cases {
				b.Run(c.Name, func(b *testing.B) {
					wall, cpu := contended(b, c.Lock, g, b.N, b.ResetTimer)
					ReportContended(b, wall, cpu)
				})
			}
		})
	}
}

// contendedRound is the number of operations of each lock between
// switches in BenchContendedRatio: a few milliseconds.
const contendedRound = 20000

// BenchContendedRatio is BenchContended with sync.Mutex and each case's
// lock in alternating rounds of contendedRound operations, and reports the
// lock's throughput and CPU time per op as multiples of sync.Mutex's in
// the same rounds (x-sync.Mutex-ops/s, x-sync.Mutex-cpu). On a machine
// shared with other work, load that comes and goes then weighs on both
// alike; separate sub-benchmarks, a second or more apart, gave throughput
// ratios that varied by a factor of three from run to run. b.N counts
// each lock's operations.
func BenchContendedRatio(b *testing.B, cases []LockCase) {
	for _, g := range contendedGoroutines {
		for _, c := range cases {
			b.Run(fmt.Sprintf("goroutines=%d/%s", g, c.Name), func(b *testing.B) {
				base := new(sync.Mutex)
				var baseWall, baseCPU, wall, cpu time.Duration
				for done := 0; done < b.N; done += contendedRound {
					w, t := contended(b, base, g, contendedRound, nil)
					baseWall, baseCPU = baseWall+w, baseCPU+t
					w, t = contended(b, c.Lock, g, contendedRound, nil)
					wall, cpu = wall+w, cpu+t
				}
				b.ReportMetric(float64(baseWall)/float64(wall), "x-sync.Mutex-ops/s")
				b.ReportMetric(float64(cpu)/float64(baseCPU), "x-sync.Mutex-cpu")
			})
		}
	}
}

// contended runs goroutines goroutines sharing l, n operations in all,
// each doing Work inside l, and returns the real and CPU time they took.
func contended(b *testing.B, l sync.Locker, goroutines, n int, ready func()) (wall, cpu time.Duration) {
	var shared uint64 // guarded by l
	return Contend(b, goroutines, n, ready, func(_, k int) {
		for range k {
			l.Lock()
			shared = Work(shared)
			l.Unlock()
		}
	})
}

// Contend starts goroutines goroutines, the g-th of which runs body(g, k)
// with the k summing to n, releases them together and returns the real
// and the process's CPU time from the release until the last returns.
// ready, if not nil, is called just before the release (b.ResetTimer, to
// leave the goroutines' start out). A panic in body (a lock's misuse
// panic) fails the benchmark without killing the binary; that goroutine
// stops early.
func Contend(b *testing.B, goroutines, n int, ready func(), body func(g, k int)) (wall, cpu time.Duration) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range goroutines {
		k := n / goroutines
		if g < n%goroutines {
			k++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if v := recover(); v != nil {
					b.Errorf("lock panicked: %v", v)
				}
			}()
			<-start
			body(g, k)
		}()
	}
	if ready != nil {
		ready()
	}
	cpu0, t0 := cputime.Total(), time.Now()
	close(start)
	wg.Wait()
	return time.Since(t0), cputime.Total() - cpu0
}

// ReportContended stops b's timer and reports the throughput (ops/s) and
// the process's CPU time (user+sys) per operation of b.N operations that
// took wall and cpu (from Contend).
func ReportContended(b *testing.B, wall, cpu time.Duration) {
	b.StopTimer()
	b.ReportMetric(float64(b.N)/wall.Seconds(), "ops/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
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

// BenchRWMix runs 1, 2, 4 and 8 goroutines sharing each case's lock, with
// 90 % and then 99 % of operations reads; each operation is a read
// (RLock, Work reading the shared state, RUnlock) or a write (Lock, Work
// updating it, Unlock). It reports throughput and the process's CPU time
// (user+sys) per operation.
func BenchRWMix(b *testing.B, cases []RWCase) {
	for _, readPermille := range []int{900, 990} {
		for _, g := range append([]int{1}, contendedGoroutines...) {
			b.Run(fmt.Sprintf("reads=%d%%/goroutines=%d", readPermille/10, g), func(b *testing.B) {
				for _, c := range cases {
					b.Run(c.Name, func(b *testing.B) { benchRWMix(b, g, readPermille, c.New()) })
				}
			})
		}
	}
}

// benchRWMix is one sub-benchmark of BenchRWMix: goroutines goroutines on
// l, each operation a read with probability readPermille/1000.
func benchRWMix(b *testing.B, goroutines, readPermille int, l RWLocker) {
	var shared uint64 // guarded by l
	var sink atomic.Uint64
	wall, cpu := Contend(b, goroutines, b.N, b.ResetTimer, func(g, k int) {
		rng := uint64(g)*0x9e3779b97f4a7c15 + 1
		var local uint64
		for range k {
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
	})
	ReportContended(b, wall, cpu)
}
