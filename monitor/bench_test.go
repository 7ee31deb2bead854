//go:build unix

// The benchmarks need syscall.Getrusage for CPU time, hence the build
// constraint; the tests and examples build everywhere.

package monitor_test

import (
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/monitor"
)

// A lockCase is one lock under benchmark. Every case goes through the same
// helper and calls Lock and Unlock through the sync.Locker interface, so
// sync.Mutex pays the same dynamic dispatch as the monitor and the ratios
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

// BenchmarkMonitorUncontended is the pair that acquires and releases the
// monitor (first entry), against sync.Mutex's pair.
func BenchmarkMonitorUncontended(b *testing.B) {
	benchPair(b, []lockCase{
		{"sync.Mutex", plain(new(sync.Mutex))},
		{"monitor.Monitor", plain(new(monitor.Monitor))},
	})
}

// BenchmarkMonitorReentry is a pair by the owner of a monitor it already
// holds once (depth 1 -> 2 -> 1), against sync.Mutex's uncontended pair.
func BenchmarkMonitorReentry(b *testing.B) {
	benchPair(b, []lockCase{
		{"sync.Mutex", plain(new(sync.Mutex))},
		{"monitor.Monitor", func() (sync.Locker, func()) {
			m := new(monitor.Monitor)
			m.Lock()
			return m, m.Unlock
		}},
	})
}

// BenchmarkMonitorContended runs goroutines goroutines sharing one lock,
// each doing about 100 ns of work inside it, and reports throughput and
// the process's CPU time (user+sys) per operation.
func BenchmarkMonitorContended(b *testing.B) {
	for _, g := range []int{2, 4, 8} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			benchContended(b, g, []lockCase{
				{"sync.Mutex", plain(new(sync.Mutex))},
				{"monitor.Monitor", plain(new(monitor.Monitor))},
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

// workRounds makes work take roughly 100 ns on a current x86-64 core (see
// BenchmarkWork in package mutex): a chain of dependent multiply-adds the
// compiler cannot fold away.
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
