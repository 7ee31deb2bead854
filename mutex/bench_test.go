//go:build unix

// The benchmarks report CPU time, which internal/cputime measures on unix
// systems only, hence the build constraint; the tests and examples build everywhere.

package mutex_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/internal/cputime"
	"github.com/locksmith-go/locksmith/internal/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// mutexPairs and monitorPairs call Lock and Unlock on the concrete type,
// as users do (see testutil.PairCase).
func mutexPairs(m *mutex.Mutex) func(int) {
	return func(n int) {
		for range n {
			m.Lock()
			m.Unlock()
		}
	}
}

func monitorPairs(m *monitor.Monitor) func(int) {
	return func(n int) {
		for range n {
			m.Lock()
			m.Unlock()
		}
	}
}

// BenchmarkMutexUncontended is the uncontended Lock/Unlock pair:
// sync.Mutex, the floor lock (testutil.FloorLock: the least owner
// tracking costs), mutex.Mutex, and a monitor.Monitor's first entry.
func BenchmarkMutexUncontended(b *testing.B) {
	testutil.BenchPairs(b, append(testutil.BaselinePairs(),
		testutil.PairCase{Name: "mutex.Mutex", Pairs: mutexPairs(new(mutex.Mutex))},
		testutil.PairCase{Name: "monitor.Monitor", Pairs: monitorPairs(new(monitor.Monitor))},
	))
}

// BenchmarkMutexContended runs goroutines goroutines sharing one lock,
// each doing about 100 ns of work inside it, and reports throughput and
// the process's CPU time (user+sys) per operation.
func BenchmarkMutexContended(b *testing.B) {
	for _, g := range []int{2, 4, 8} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			testutil.BenchContended(b, g, []testutil.LockCase{
				{Name: "sync.Mutex", Setup: testutil.Plain(new(sync.Mutex))},
				{Name: "mutex.Mutex", Setup: testutil.Plain(new(mutex.Mutex))},
			})
		})
	}
}

// BenchmarkMutexContendedRatio is BenchmarkMutexContended (and
// BenchmarkMonitorContended) with sync.Mutex and the lock under test in
// alternating rounds of contendedRound operations, and reports the lock's
// throughput and CPU time per op as multiples of sync.Mutex's in the same
// rounds (x-sync.Mutex-ops/s, x-sync.Mutex-cpu). On a machine shared with
// other work, load that comes and goes then weighs on both alike;
// separate sub-benchmarks, a second or more apart, gave throughput ratios
// that varied by a factor of three from run to run. b.N counts each
// lock's operations.
func BenchmarkMutexContendedRatio(b *testing.B) {
	for _, g := range []int{2, 4, 8} {
		for _, c := range []struct {
			name string
			l    sync.Locker
		}{
			{"mutex.Mutex", new(mutex.Mutex)},
			{"monitor.Monitor", new(monitor.Monitor)},
		} {
			b.Run(fmt.Sprintf("goroutines=%d/%s", g, c.name), func(b *testing.B) {
				base := new(sync.Mutex)
				var baseWall, baseCPU, wall, cpu time.Duration
				for done := 0; done < b.N; done += contendedRound {
					w, t := contended(base, g, contendedRound)
					baseWall, baseCPU = baseWall+w, baseCPU+t
					w, t = contended(c.l, g, contendedRound)
					wall, cpu = wall+w, cpu+t
				}
				b.ReportMetric(float64(baseWall)/float64(wall), "x-sync.Mutex-ops/s")
				b.ReportMetric(float64(cpu)/float64(baseCPU), "x-sync.Mutex-cpu")
			})
		}
	}
}

// contendedRound is the number of operations of each lock between
// switches in BenchmarkMutexContendedRatio: a few milliseconds.
const contendedRound = 20000

// contended runs goroutines goroutines that share l, n operations in all,
// each doing testutil.Work inside it, and returns the real and CPU time
// they took.
func contended(l sync.Locker, goroutines, n int) (wall, cpu time.Duration) {
	var shared uint64 // guarded by l
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range goroutines {
		k := n / goroutines
		if i < n%goroutines {
			k++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range k {
				l.Lock()
				shared = testutil.Work(shared)
				l.Unlock()
			}
		}()
	}
	cpu0, t0 := cputime.Total(), time.Now()
	close(start)
	wg.Wait()
	return time.Since(t0), cputime.Total() - cpu0
}

// BenchmarkWork measures the critical section of the contended benchmarks
// alone, so that their results can be read against it.
func BenchmarkWork(b *testing.B) {
	var x uint64
	for b.Loop() {
		x = testutil.Work(x)
	}
	sink = x
}

var sink uint64
