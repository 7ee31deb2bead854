//go:build unix

package monitor_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/locksmith-go/locksmith/internal/cputime"
	"github.com/locksmith-go/locksmith/internal/testutil"
	"github.com/locksmith-go/locksmith/monitor"
)

// See mutex/rwbench_test.go: direct calls on the concrete types, with
// sync.RWMutex in the same process for the ratios.

// BenchmarkRWMonitorReadPair is an uncontended first-entry RLock/RUnlock
// pair.
func BenchmarkRWMonitorReadPair(b *testing.B) {
	b.Run("sync.RWMutex", func(b *testing.B) {
		var rw sync.RWMutex
		b.ResetTimer()
		cpu0 := cputime.Total()
		for range b.N {
			rw.RLock()
			rw.RUnlock()
		}
		testutil.ReportCPU(b, cpu0)
	})
	b.Run("monitor.RWMonitor", func(b *testing.B) {
		var rw monitor.RWMonitor
		b.ReportAllocs()
		b.ResetTimer()
		cpu0 := cputime.Total()
		for range b.N {
			rw.RLock()
			rw.RUnlock()
		}
		testutil.ReportCPU(b, cpu0)
	})
}

// BenchmarkRWMonitorReentrantRead is a read pair by a goroutine that
// already holds a read lock (holds 1 -> 2 -> 1), against sync.RWMutex's
// plain read pair.
func BenchmarkRWMonitorReentrantRead(b *testing.B) {
	b.Run("sync.RWMutex", func(b *testing.B) {
		var rw sync.RWMutex
		b.ResetTimer()
		cpu0 := cputime.Total()
		for range b.N {
			rw.RLock()
			rw.RUnlock()
		}
		testutil.ReportCPU(b, cpu0)
	})
	b.Run("monitor.RWMonitor", func(b *testing.B) {
		var rw monitor.RWMonitor
		rw.RLock()
		defer rw.RUnlock()
		b.ReportAllocs()
		b.ResetTimer()
		cpu0 := cputime.Total()
		for range b.N {
			rw.RLock()
			rw.RUnlock()
		}
		testutil.ReportCPU(b, cpu0)
	})
}

// BenchmarkRWMonitorWritePair is an uncontended first-entry Lock/Unlock
// pair.
func BenchmarkRWMonitorWritePair(b *testing.B) {
	b.Run("sync.RWMutex", func(b *testing.B) {
		var rw sync.RWMutex
		b.ResetTimer()
		cpu0 := cputime.Total()
		for range b.N {
			rw.Lock()
			rw.Unlock()
		}
		testutil.ReportCPU(b, cpu0)
	})
	b.Run("monitor.RWMonitor", func(b *testing.B) {
		var rw monitor.RWMonitor
		b.ReportAllocs()
		b.ResetTimer()
		cpu0 := cputime.Total()
		for range b.N {
			rw.Lock()
			rw.Unlock()
		}
		testutil.ReportCPU(b, cpu0)
	})
}

// BenchmarkRWMonitorMix: as BenchmarkRWMutexMix, for RWMonitor.
func BenchmarkRWMonitorMix(b *testing.B) {
	for _, reads := range []int{900, 990} {
		for _, g := range []int{1, 2, 4, 8} {
			b.Run(fmt.Sprintf("reads=%d%%/goroutines=%d", reads/10, g), func(b *testing.B) {
				testutil.BenchRWMix(b, g, reads, []testutil.RWCase{
					{Name: "sync.RWMutex", New: func() testutil.RWLocker { return new(sync.RWMutex) }},
					{Name: "monitor.RWMonitor", New: func() testutil.RWLocker { return new(monitor.RWMonitor) }},
				})
			})
		}
	}
}
