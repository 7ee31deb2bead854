//go:build unix

// The benchmarks need syscall.Getrusage for CPU time, hence the build
// constraint; the tests and examples build everywhere.

package mutex_test

import (
	"fmt"
	"sync"
	"testing"

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
