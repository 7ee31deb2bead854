//go:build unix

// The benchmarks report CPU time, which internal/testkit/cputime measures on unix
// systems only, hence the build constraint; the tests and examples build everywhere.

package monitor_test

import (
	"sync"
	"testing"

	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
)

// monitorPairs calls Lock and Unlock on the concrete type, as users do
// (see testutil.PairCase).
//
//go:noinline
func monitorPairs(m *monitor.Monitor) func(int) {
	return func(n int) {
		for range n {
			m.Lock()
			m.Unlock()
		}
	}
}

// BenchmarkMonitorUncontended is the pair that acquires and releases the
// monitor (first entry), against sync.Mutex's pair and the floor lock's
// (testutil.FloorLock: the least owner tracking costs).
func BenchmarkMonitorUncontended(b *testing.B) {
	testutil.BenchPairs(b, append(testutil.BaselinePairs(),
		testutil.PairCase{Name: "monitor.Monitor", Pairs: monitorPairs(new(monitor.Monitor))},
	))
}

// BenchmarkMonitorReentry is a pair by the owner of a monitor it already
// holds once (depth 1 -> 2 -> 1), against the same baselines. The floor
// lock cannot be re-entered: its row is its uncontended pair, the least
// a pair that checks the owner's goroutine ID costs.
func BenchmarkMonitorReentry(b *testing.B) {
	m := new(monitor.Monitor)
	reentry := monitorPairs(m)
	testutil.BenchPairs(b, append(testutil.BaselinePairs(),
		testutil.PairCase{Name: "monitor.Monitor", Pairs: func(n int) {
			m.Lock()
			reentry(n)
			m.Unlock()
		}},
	))
}

// BenchmarkMonitorContended runs 2, 4 and 8 goroutines sharing one lock,
// each doing about 100 ns of work inside it, and reports throughput and
// the process's CPU time (user+sys) per operation.
func BenchmarkMonitorContended(b *testing.B) {
	testutil.BenchContended(b, []testutil.LockCase{
		{Name: "sync.Mutex", Lock: new(sync.Mutex)},
		{Name: "monitor.Monitor", Lock: new(monitor.Monitor)},
	})
}
