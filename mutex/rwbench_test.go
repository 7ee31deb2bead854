//go:build unix

package mutex_test

import (
	"sync"
	"testing"

	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/mutex"
)

// The pair benchmarks call the methods directly on the concrete types (see
// testutil.PairCase), so that each figure is the lock's own cost;
// sync.RWMutex runs in the same process for the ratios. cpu-ns/op is the
// steadier figure on a shared machine.

//go:noinline
func rwMutexReadPairs(rw *mutex.RWMutex) func(int) {
	return func(n int) {
		for range n {
			rw.RLock()
			rw.RUnlock()
		}
	}
}

//go:noinline
func rwMutexWritePairs(rw *mutex.RWMutex) func(int) {
	return func(n int) {
		for range n {
			rw.Lock()
			rw.Unlock()
		}
	}
}

// BenchmarkRWMutexReadPair is an uncontended RLock/RUnlock pair.
func BenchmarkRWMutexReadPair(b *testing.B) {
	testutil.BenchPairs(b, []testutil.PairCase{
		{Name: "sync.RWMutex", Pairs: testutil.SyncRWReadPairs(new(sync.RWMutex))},
		{Name: "mutex.RWMutex", Pairs: rwMutexReadPairs(new(mutex.RWMutex))},
	})
}

// BenchmarkRWMutexWritePair is an uncontended Lock/Unlock pair.
func BenchmarkRWMutexWritePair(b *testing.B) {
	testutil.BenchPairs(b, []testutil.PairCase{
		{Name: "sync.RWMutex", Pairs: testutil.SyncRWWritePairs(new(sync.RWMutex))},
		{Name: "mutex.RWMutex", Pairs: rwMutexWritePairs(new(mutex.RWMutex))},
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
	testutil.RunPairs(b, rwMutexReadPairs(&rw))
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
	testutil.RunPairs(b, rwMutexReadPairs(&rw))
}

// BenchmarkRWMutexMix runs 1, 2, 4 and 8 goroutines on one lock, 90 % and
// 99 % of operations reads, each doing about 100 ns of work inside the
// lock; it reports throughput (ops/s) and CPU per operation.
func BenchmarkRWMutexMix(b *testing.B) {
	testutil.BenchRWMix(b, []testutil.RWCase{
		{Name: "sync.RWMutex", New: func() testutil.RWLocker { return new(sync.RWMutex) }},
		{Name: "mutex.RWMutex", New: func() testutil.RWLocker { return new(mutex.RWMutex) }},
	})
}
