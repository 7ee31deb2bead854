//go:build unix

// The benchmarks need syscall.Getrusage for CPU time, hence the build
// constraint; the tests and examples build everywhere.

package mutex_test

import (
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// A lockCase is one lock under benchmark. Every case goes through the same
// helper and calls Lock and Unlock through the sync.Locker interface, so
// sync.Mutex pays the same dynamic dispatch as the others and the ratios
// compare the locks, not the call sites.
type lockCase struct {
	name string
	// setup returns the lock and a function that undoes whatever setup did;
	// both are called on the benchmark's goroutine.
	setup func() (l sync.Locker, teardown func())
}

func plain(l sync.Locker) func() (sync.Locker, func()) {
	return func() (sync.Locker, func()) { return l, func() {} }
}

func uncontendedCases() []lockCase {
	return []lockCase{
		{"sync.Mutex", plain(new(sync.Mutex))},
		{"mutex.Mutex", plain(new(mutex.Mutex))},
		{"monitor.Monitor", plain(new(monitor.Monitor))}, // first entry
	}
}

// benchPair measures one Lock/Unlock pair by a single goroutine.
func benchPair(b *testing.B, cases []lockCase) {
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			l, teardown := c.setup()
			defer teardown()
			b.ReportAllocs()
			for b.Loop() {
				l.Lock()
				l.Unlock()
			}
		})
	}
}

// BenchmarkMutexUncontended is the uncontended Lock/Unlock pair:
// sync.Mutex, mutex.Mutex, and a monitor.Monitor's first entry.
func BenchmarkMutexUncontended(b *testing.B) { benchPair(b, uncontendedCases()) }

// BenchmarkMutexContended runs goroutines goroutines sharing one lock,
// each doing about 100 ns of work inside it, and reports throughput and
// the process's CPU time (user+sys) per operation.
func BenchmarkMutexContended(b *testing.B) {
	for _, g := range []int{2, 4, 8} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			benchContended(b, g, []lockCase{
				{"sync.Mutex", plain(new(sync.Mutex))},
				{"mutex.Mutex", plain(new(mutex.Mutex))},
			})
		})
	}
}

func benchContended(b *testing.B, goroutines int, cases []lockCase) {
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			l, teardown := c.setup()
			defer teardown()
			var shared uint64 // guarded by l
			var wg sync.WaitGroup
			start := make(chan struct{})
			for g := range goroutines {
				n := b.N / goroutines
				if g < b.N%goroutines {
					n++
				}
				wg.Go(func() {
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
						shared = work(shared)
						l.Unlock()
					}
				})
			}
			b.ResetTimer()
			cpu0, t0 := cpuTime(), time.Now()
			close(start)
			wg.Wait()
			wall, cpu := time.Since(t0), cpuTime()-cpu0
			b.StopTimer()
			b.ReportMetric(float64(b.N)/wall.Seconds(), "ops/s")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// workRounds makes work take roughly 100 ns on a current x86-64 core: a
// chain of dependent multiply-adds the compiler cannot fold away.
const workRounds = 80

//go:noinline
func work(x uint64) uint64 {
	for i := range uint64(workRounds) {
		x = x*6364136223846793005 + i
	}
	return x
}

// cpuTime returns the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWork measures the critical section of the contended benchmarks
// alone, so that their results can be read against it.
func BenchmarkWork(b *testing.B) {
	var x uint64
	for b.Loop() {
		x = work(x)
	}
	sink = x
}

var sink uint64
