//go:build unix

// The benchmarks need syscall.Getrusage for CPU time, hence the build
// constraint; the tests and examples build everywhere.

package monitor_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/locksmith-go/locksmith/internal/testutil"
	"github.com/locksmith-go/locksmith/monitor"
)

// BenchmarkMonitorUncontended is the pair that acquires and releases the
// monitor (first entry), against sync.Mutex's pair.
func BenchmarkMonitorUncontended(b *testing.B) {
	testutil.BenchPair(b, []testutil.LockCase{
		{Name: "sync.Mutex", Setup: testutil.Plain(new(sync.Mutex))},
		{Name: "monitor.Monitor", Setup: testutil.Plain(new(monitor.Monitor))},
	})
}

// BenchmarkMonitorReentry is a pair by the owner of a monitor it already
// holds once (depth 1 -> 2 -> 1), against sync.Mutex's uncontended pair.
func BenchmarkMonitorReentry(b *testing.B) {
	testutil.BenchPair(b, []testutil.LockCase{
		{Name: "sync.Mutex", Setup: testutil.Plain(new(sync.Mutex))},
		{Name: "monitor.Monitor", Setup: func() (sync.Locker, func()) {
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
			testutil.BenchContended(b, g, []testutil.LockCase{
				{Name: "sync.Mutex", Setup: testutil.Plain(new(sync.Mutex))},
				{Name: "monitor.Monitor", Setup: testutil.Plain(new(monitor.Monitor))},
			})
		})
	}
}
