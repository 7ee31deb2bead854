package detect_test

import (
	"runtime"
	"slices"
	"testing"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/mutex"
)

// BenchmarkOrderReadSort: three sorts of 20,000 items, each with its own
// RWMutex, whose comparator read-locks both items: read-read inversions
// by the hundred thousand, harmless (nothing is write-locked) and kept
// pending in Order mode. Cycles and Order sub-benchmarks compare the
// sort; fresh-nesting measures a new nesting of two Mutexes after it,
// against the same in a graph with nothing pending.
//
//	go test -run '^$' -bench OrderReadSort -benchtime 1x ./detect
func BenchmarkOrderReadSort(b *testing.B) {
	const n = 20000
	type item struct {
		mu  mutex.RWMutex
		key int
	}
	sortAll := func() []*item {
		items := make([]*item, n)
		for i := range items {
			items[i] = &item{key: (i * 7919) % n}
		}
		cmp := func(x, y *item) int {
			x.mu.RLock()
			defer x.mu.RUnlock()
			y.mu.RLock()
			defer y.mu.RUnlock()
			return x.key - y.key
		}
		slices.SortFunc(items, cmp)
		slices.SortFunc(items, func(x, y *item) int { return -cmp(x, y) })
		slices.SortFunc(items, cmp)
		return items
	}
	for _, mode := range []detect.Mode{detect.Cycles, detect.Order} {
		b.Run(mode.String(), func(b *testing.B) {
			defer detect.Configure(detect.WithMode(mode), detect.WithWaitTimeout(0))()
			for range b.N {
				runtime.KeepAlive(sortAll())
			}
		})
	}
	nesting := func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			x, y := new(mutex.Mutex), new(mutex.Mutex)
			x.Lock()
			y.Lock()
			y.Unlock()
			x.Unlock()
		}
	}
	b.Run("fresh-nesting/empty", func(b *testing.B) {
		defer detect.Configure(detect.WithMode(detect.Order), detect.WithWaitTimeout(0))()
		nesting(b)
	})
	b.Run("fresh-nesting/after-sort", func(b *testing.B) {
		defer detect.Configure(detect.WithMode(detect.Order), detect.WithWaitTimeout(0))()
		items := sortAll()
		b.ResetTimer()
		nesting(b)
		b.StopTimer()
		runtime.KeepAlive(items)
	})
}
