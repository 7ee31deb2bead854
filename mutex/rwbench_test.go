//go:build unix

package mutex_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/locksmith-go/locksmith/internal/cputime"
	"github.com/locksmith-go/locksmith/internal/testutil"
	"github.com/locksmith-go/locksmith/mutex"
)

// The pair benchmarks call the methods directly on the concrete types, so
// that each figure is the lock's own cost; sync.RWMutex runs in the same
// process for the ratios. cpu-ns/op is the steadier figure on a shared
// machine.

// BenchmarkRWMutexReadPair is an uncontended RLock/RUnlock pair.
func BenchmarkRWMutexReadPair(b *testing.B) {
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
	b.Run("mutex.RWMutex", func(b *testing.B) {
		var rw mutex.RWMutex
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

// BenchmarkRWMutexWritePair is an uncontended Lock/Unlock pair.
func BenchmarkRWMutexWritePair(b *testing.B) {
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
	b.Run("mutex.RWMutex", func(b *testing.B) {
		var rw mutex.RWMutex
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

// BenchmarkRWMutexReadPairWithReaders is the read pair while seven other
// goroutines hold the lock for reading, one of them in the benchmark
// goroutine's home slot: eight readers, the most the inline slots hold
// without the overflow map, and the reader displaced from its home slot
// (the slow path, which must not allocate).
func BenchmarkRWMutexReadPairWithReaders(b *testing.B) {
	var rw mutex.RWMutex
	release := testutil.HoldReaders(b, 7, rw.RLock, rw.RUnlock)
	defer release()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Total()
	for range b.N {
		rw.RLock()
		rw.RUnlock()
	}
	testutil.ReportCPU(b, cpu0)
}

// BenchmarkRWMutexReadPairBesideDisplaced is the read pair in the
// benchmark goroutine's home slot while another reader, whose home slot
// it is too, holds the lock from another slot (it came while the
// benchmark goroutine was reading).
func BenchmarkRWMutexReadPairBesideDisplaced(b *testing.B) {
	var rw mutex.RWMutex
	rw.RLock()
	release := testutil.HoldReaders(b, 1, rw.RLock, rw.RUnlock)
	defer release()
	rw.RUnlock()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Total()
	for range b.N {
		rw.RLock()
		rw.RUnlock()
	}
	testutil.ReportCPU(b, cpu0)
}

// BenchmarkRWMutexMix runs 1, 2, 4 and 8 goroutines on one lock, 90 % and
// 99 % of operations reads, each doing about 100 ns of work inside the
// lock; it reports throughput (ops/s) and CPU per operation.
func BenchmarkRWMutexMix(b *testing.B) {
	for _, reads := range []int{900, 990} {
		for _, g := range []int{1, 2, 4, 8} {
			b.Run(fmt.Sprintf("reads=%d%%/goroutines=%d", reads/10, g), func(b *testing.B) {
				testutil.BenchRWMix(b, g, reads, []testutil.RWCase{
					{Name: "sync.RWMutex", New: func() testutil.RWLocker { return new(sync.RWMutex) }},
					{Name: "mutex.RWMutex", New: func() testutil.RWLocker { return new(mutex.RWMutex) }},
				})
			})
		}
	}
}
