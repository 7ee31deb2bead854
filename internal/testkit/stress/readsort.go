package stress

import (
	"fmt"
	"slices"

	"github.com/locksmith-go/locksmith/mutex"
)

// readSortItems is the number of items, each with its own RWMutex, that
// the read-sort workload sorts in a round.
const readSortItems = 96

// readSort: goroutines sort their own slices of one round's items, each
// item with its own RWMutex, with a comparator that read-locks both items
// (RLock a, RLock b, compare, unlock), ascending and descending by turns.
// Every pair of items is nested both ways: read-read inversions by the
// thousand, which are no deadlock (nothing is ever write-locked) and which
// Order mode must keep pending without a report (see
// BenchmarkOrderReadSort in package detect). Each sort must come out
// ordered, and every item free at the end.
func (r *round) readSort() {
	type item struct {
		mu  mutex.RWMutex
		key int
	}
	items := make([]*item, readSortItems)
	for i := range items {
		items[i] = &item{key: (i * 37) % readSortItems} // 37 is prime to the count: a permutation
	}
	sorts := max(1, r.cfg.Ops/100)
	for n := range r.cfg.Goroutines {
		r.spawn(fmt.Sprintf("read sort #%d", n), func(w *worker) {
			mine := slices.Clone(items)
			w.rng.Shuffle(len(mine), func(i, j int) { mine[i], mine[j] = mine[j], mine[i] })
			for s := range sorts {
				sign := 1 - 2*(s&1) // ascending, then descending
				cmp := func(x, y *item) int {
					x.mu.RLock()
					defer x.mu.RUnlock()
					y.mu.RLock()
					defer y.mu.RUnlock()
					w.ops[pRWMutex] += 4
					return sign * (x.key - y.key)
				}
				slices.SortFunc(mine, cmp)
				for i := 1; i < len(mine); i++ {
					if sign*(mine[i].key-mine[i-1].key) < 0 {
						w.anomalyf("sort %d: items %d and %d out of order", s+1, i-1, i)
						break
					}
				}
			}
		})
	}
	r.atEnd(func() {
		for i, it := range items {
			if it.mu.Locked() || it.mu.Readers() != 0 {
				r.an.addf("read sort (round %d): item %d locked %v with %d readers after every goroutine ended", r.n+1, i, it.mu.Locked(), it.mu.Readers())
			}
		}
	})
}
