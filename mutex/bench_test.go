//go:build unix

// The benchmarks report CPU time, which internal/testkit/cputime measures on unix
// systems only, hence the build constraint; the tests and examples build everywhere.

package mutex_test

import (
	"sync"
	"testing"

	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// mutexPairs and monitorPairs call Lock and Unlock on the concrete type,
// as users do (see testutil.PairCase).
//
//go:noinline
func mutexPairs(m *mutex.Mutex) func(int) {
	return func(n int) {
		for range n {
			m.Lock()
			m.Unlock()
		}
	}
}

//go:noinline
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

// BenchmarkMutexContended runs 2, 4 and 8 goroutines sharing one lock,
// each doing about 100 ns of work inside it, and reports throughput and
// the process's CPU time (user+sys) per operation.
func BenchmarkMutexContended(b *testing.B) {
	testutil.BenchContended(b, []testutil.LockCase{
		{Name: "sync.Mutex", Lock: new(sync.Mutex)},
		{Name: "mutex.Mutex", Lock: new(mutex.Mutex)},
	})
}

// BenchmarkMutexContendedRatio is BenchmarkMutexContended (and
// BenchmarkMonitorContended) with sync.Mutex and the lock under test in
// alternating rounds, and reports the lock's throughput and CPU time per
// op as multiples of sync.Mutex's in the same rounds (see
// testutil.BenchContendedRatio).
func BenchmarkMutexContendedRatio(b *testing.B) {
	testutil.BenchContendedRatio(b, []testutil.LockCase{
		{Name: "mutex.Mutex", Lock: new(mutex.Mutex)},
		{Name: "monitor.Monitor", Lock: new(monitor.Monitor)},
	})
}

// BenchmarkWork measures the critical section of the contended benchmarks
// alone, so that their results can be read against it.
func BenchmarkWork(b *testing.B) {
	var x uint64
	b.ResetTimer()
	for range b.N {
		x = testutil.Work(x)
	}
	sink = x
}

var sink uint64
