//go:build unix

// The benchmarks report CPU time, which internal/testkit/cputime measures on unix
// systems only, hence the build constraint; the tests build everywhere.

package detectcost_test

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sasha-s/go-deadlock"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/cputime"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// The cost of detection, each ratio within one run:
// Cycles against Off for the uncontended pair; Order mode against
// go-deadlock's default mode and sync.Mutex for two nested locks; Order
// mode against go-deadlock for contended throughput. The uncontended
// pair calls each lock on its concrete type (see
// BenchmarkMutexUncontendedPair); the other benchmarks go through one
// helper and call the locks through sync.Locker, so sync.Mutex pays the
// same dynamic dispatch as the others there.
//
//	go test -run '^$' -bench . -benchtime 1s -count 5 ./bench/detectcost | benchstat -

// A benchCase is one configuration under benchmark. setup returns the
// locks (as many as the benchmark asks for) and a teardown; both run on
// the benchmark's goroutine.
type benchCase struct {
	name  string
	setup func(n int) (locks []sync.Locker, teardown func())
}

// inMode makes n fresh locks with newLock, with detection in mode.
func inMode(mode detect.Mode, newLock func() sync.Locker) func(int) ([]sync.Locker, func()) {
	return func(n int) ([]sync.Locker, func()) {
		restore := detect.Configure(detect.WithMode(mode), detect.WithWaitTimeout(0))
		locks := make([]sync.Locker, n)
		for i := range locks {
			locks[i] = newLock()
		}
		return locks, restore
	}
}

// undetected makes n fresh locks that the detector does not see.
func undetected(newLock func() sync.Locker) func(int) ([]sync.Locker, func()) {
	return func(n int) ([]sync.Locker, func()) {
		locks := make([]sync.Locker, n)
		for i := range locks {
			locks[i] = newLock()
		}
		return locks, func() {}
	}
}

// goDeadlockDefault makes n go-deadlock Mutexes under its default options
// (lock-order detection on, a 30 s wait timeout), except that a report is
// counted, not followed by os.Exit.
func goDeadlockDefault(n int) ([]sync.Locker, func()) {
	saved := deadlock.Opts
	deadlock.Opts.OnPotentialDeadlock = func() { goDeadlockReports.Add(1) }
	deadlock.Opts.LogBuf = io.Discard
	locks := make([]sync.Locker, n)
	for i := range locks {
		locks[i] = new(deadlock.Mutex)
	}
	return locks, func() { deadlock.Opts = saved }
}

var goDeadlockReports atomic.Int32

func newSync() sync.Locker    { return new(sync.Mutex) }
func newMutex() sync.Locker   { return new(mutex.Mutex) }
func newMonitor() sync.Locker { return new(monitor.Monitor) }

// BenchmarkMutexUncontendedPair is one Lock/Unlock pair by one goroutine,
// by mode: Cycles does no more than Off on this path. cpu-ns/op is the
// process's CPU time per pair, steadier than ns/op on a shared machine.
// Each case calls its lock's methods on the concrete type, as a program
// holding a *mutex.Mutex does and as lockbench's uncontended table does
// (bench.Pairs; go run ./cmd/lockbench -workload headline, from bench),
// so that the two agree on the ratios to sync.Mutex: through sync.Locker
// each pair would pay two indirect calls and sync.Mutex would lose the
// inlining of its fast path, a few nanoseconds added to numerator and
// denominator alike. Both use a fresh lock and one goroutine; lockbench
// runs more rounds and reports their spread, so its ratio is the one to
// quote, these the ones to compare modes of one lock in one run.
func BenchmarkMutexUncontendedPair(b *testing.B) {
	cases := []struct {
		name string
		run  func(b *testing.B)
	}{
		{"sync.Mutex", func(b *testing.B) {
			var l sync.Mutex
			c := startCPU(b)
			for b.Loop() {
				l.Lock()
				l.Unlock()
			}
			c.report()
		}},
		{"mutex.Mutex/off", mutexPairs(detect.Off)},
		{"mutex.Mutex/cycles", mutexPairs(detect.Cycles)},
		{"mutex.Mutex/order", mutexPairs(detect.Order)},
		{"monitor.Monitor/off", monitorPairs(detect.Off)},
		{"monitor.Monitor/cycles", monitorPairs(detect.Cycles)},
		{"monitor.Monitor/order", monitorPairs(detect.Order)},
		{"go-deadlock", func(b *testing.B) {
			_, teardown := goDeadlockDefault(0)
			defer teardown()
			l := new(deadlock.Mutex)
			c := startCPU(b)
			for b.Loop() {
				l.Lock()
				l.Unlock()
			}
			c.report()
		}},
	}
	for _, c := range cases {
		b.Run(c.name, c.run)
	}
}

// mutexPairs and monitorPairs time the pair of a fresh lock of their type
// in mode.
func mutexPairs(mode detect.Mode) func(*testing.B) {
	return func(b *testing.B) {
		defer detect.Configure(detect.WithMode(mode), detect.WithWaitTimeout(0))()
		l := new(mutex.Mutex)
		c := startCPU(b)
		for b.Loop() {
			l.Lock()
			l.Unlock()
		}
		c.report()
	}
}

func monitorPairs(mode detect.Mode) func(*testing.B) {
	return func(b *testing.B) {
		defer detect.Configure(detect.WithMode(mode), detect.WithWaitTimeout(0))()
		l := new(monitor.Monitor)
		c := startCPU(b)
		for b.Loop() {
			l.Lock()
			l.Unlock()
		}
		c.report()
	}
}

// cpuStart is a benchmark's CPU time at its start. Each case writes its
// own loop, so that its lock's methods are called on the concrete type:
// a loop taking the pair as a func would call it indirectly.
type cpuStart struct {
	b    *testing.B
	cpu0 time.Duration
}

func startCPU(b *testing.B) cpuStart {
	b.ReportAllocs()
	return cpuStart{b, cputime.Total()}
}

// report reports the CPU time per iteration since c was taken.
func (c cpuStart) report() {
	c.b.ReportMetric(float64((cputime.Total()-c.cpu0).Nanoseconds())/float64(c.b.N), "cpu-ns/op")
}

// BenchmarkMutexNestedPair takes two locks nested and releases them: in
// Order mode, after the first round, an edge-set lookup per acquisition.
func BenchmarkMutexNestedPair(b *testing.B) {
	cases := []benchCase{
		{"sync.Mutex", undetected(newSync)},
		{"mutex.Mutex/off", inMode(detect.Off, newMutex)},
		{"mutex.Mutex/cycles", inMode(detect.Cycles, newMutex)},
		{"mutex.Mutex/order", inMode(detect.Order, newMutex)},
		{"monitor.Monitor/order", inMode(detect.Order, newMonitor)},
		{"go-deadlock", goDeadlockDefault},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			locks, teardown := c.setup(2)
			defer teardown()
			outer, inner := locks[0], locks[1]
			b.ReportAllocs()
			cpu0 := cputime.Total()
			for b.Loop() {
				outer.Lock()
				inner.Lock()
				inner.Unlock()
				outer.Unlock()
			}
			b.ReportMetric(float64((cputime.Total()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkMutexContendedOrder runs goroutines goroutines sharing one
// lock, with a minimal critical section, and reports throughput and the
// process's CPU time per operation: Order mode against go-deadlock, whose
// one global mutex serialises every Lock and Unlock.
func BenchmarkMutexContendedOrder(b *testing.B) {
	cases := []benchCase{
		{"sync.Mutex", undetected(newSync)},
		{"mutex.Mutex/cycles", inMode(detect.Cycles, newMutex)},
		{"mutex.Mutex/order", inMode(detect.Order, newMutex)},
		{"go-deadlock", goDeadlockDefault},
	}
	for _, g := range []int{2, 4, 8} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			for _, c := range cases {
				b.Run(c.name, func(b *testing.B) { benchContended(b, g, c) })
			}
		})
	}
}

func benchContended(b *testing.B, goroutines int, c benchCase) {
	locks, teardown := c.setup(1)
	defer teardown()
	l := locks[0]
	var shared uint64 // guarded by l
	wall, cpu := testutil.Contend(b, goroutines, b.N, b.ResetTimer, func(_, k int) {
		for range k {
			l.Lock()
			shared++
			l.Unlock()
		}
	})
	testutil.ReportContended(b, wall, cpu)
}

// BenchmarkMutexFirstNesting nests a pair of fresh lock instances, never
// nested before (objects that carry their own locks): Order mode against
// go-deadlock, whose lock-order map records every new pair too. The locks
// are allocated with the timer stopped, so allocs/op counts the
// detectors' own allocations. detect's BenchmarkOrderFirstNesting breaks
// Order mode's cost down further.
//
// Both detectors' costs depend on the order in which the locks are used:
// in-order nests them in the order they were made, as code that makes
// objects and then uses them does, reverse in the opposite order. Order
// mode's weak pointers cost more in order (the runtime keeps a span's
// weak handles in a list sorted by address, and looks for a new handle's
// place from the lowest address up); go-deadlock costs more in order too.
func BenchmarkMutexFirstNesting(b *testing.B) {
	cases := []benchCase{
		{"mutex.Mutex/cycles", inMode(detect.Cycles, newMutex)},
		{"mutex.Mutex/order", inMode(detect.Order, newMutex)},
		{"go-deadlock", goDeadlockDefault},
	}
	for _, c := range cases {
		for _, reverse := range []bool{false, true} {
			name := c.name + "/in-order"
			if reverse {
				name = c.name + "/reverse"
			}
			b.Run(name, func(b *testing.B) {
				const batch = 512
				var locks []sync.Locker
				var teardown func()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if len(locks) == 0 {
						b.StopTimer()
						if teardown != nil {
							teardown()
						}
						locks, teardown = c.setup(2 * min(batch, b.N-i))
						if reverse {
							slices.Reverse(locks)
						}
						b.StartTimer()
					}
					outer, inner := locks[0], locks[1]
					locks = locks[2:]
					outer.Lock()
					inner.Lock()
					inner.Unlock()
					outer.Unlock()
				}
				b.StopTimer()
				teardown()
			})
		}
	}
}
