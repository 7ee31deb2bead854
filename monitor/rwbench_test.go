//go:build unix

package monitor_test

import (
	"sync"
	"testing"

	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
)

// See mutex/rwbench_test.go: direct calls on the concrete types, with
// sync.RWMutex in the same process for the ratios.

//go:noinline
func rwMonitorReadPairs(rw *monitor.RWMonitor) func(int) {
	return func(n int) {
		for range n {
			rw.RLock()
			rw.RUnlock()
		}
	}
}

//go:noinline
func rwMonitorWritePairs(rw *monitor.RWMonitor) func(int) {
	return func(n int) {
		for range n {
			rw.Lock()
			rw.Unlock()
		}
	}
}

// BenchmarkRWMonitorReadPair is an uncontended first-entry RLock/RUnlock
// pair.
func BenchmarkRWMonitorReadPair(b *testing.B) {
	testutil.BenchPairs(b, []testutil.PairCase{
		{Name: "sync.RWMutex", Pairs: testutil.SyncRWReadPairs(new(sync.RWMutex))},
		{Name: "monitor.RWMonitor", Pairs: rwMonitorReadPairs(new(monitor.RWMonitor))},
	})
}

// BenchmarkRWMonitorReentrantRead is a read pair by a goroutine that
// already holds a read lock (holds 1 -> 2 -> 1), against sync.RWMutex's
// plain read pair. The first hold is taken inside Pairs, by the goroutine
// that runs the pairs (one pair more than b.N, as in
// BenchmarkMonitorReentry).
func BenchmarkRWMonitorReentrantRead(b *testing.B) {
	rw := new(monitor.RWMonitor)
	reentry := rwMonitorReadPairs(rw)
	testutil.BenchPairs(b, []testutil.PairCase{
		{Name: "sync.RWMutex", Pairs: testutil.SyncRWReadPairs(new(sync.RWMutex))},
		{Name: "monitor.RWMonitor", Pairs: func(n int) {
			rw.RLock()
			reentry(n)
			rw.RUnlock()
		}},
	})
}

// BenchmarkRWMonitorWritePair is an uncontended first-entry Lock/Unlock
// pair.
func BenchmarkRWMonitorWritePair(b *testing.B) {
	testutil.BenchPairs(b, []testutil.PairCase{
		{Name: "sync.RWMutex", Pairs: testutil.SyncRWWritePairs(new(sync.RWMutex))},
		{Name: "monitor.RWMonitor", Pairs: rwMonitorWritePairs(new(monitor.RWMonitor))},
	})
}

// BenchmarkRWMonitorMix: as BenchmarkRWMutexMix, for RWMonitor.
func BenchmarkRWMonitorMix(b *testing.B) {
	testutil.BenchRWMix(b, []testutil.RWCase{
		{Name: "sync.RWMutex", New: func() testutil.RWLocker { return new(sync.RWMutex) }},
		{Name: "monitor.RWMonitor", New: func() testutil.RWLocker { return new(monitor.RWMonitor) }},
	})
}
