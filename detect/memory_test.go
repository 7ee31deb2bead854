package detect_test

import (
	"bytes"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// waitForGC runs the collector until cond holds: lock cleanups run
// asynchronously after the cycle that finds the lock unreachable.
func waitForGC(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(liveness)
	for {
		runtime.GC()
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached after %v", what, liveness)
		}
		runtime.Gosched()
	}
}

// near reports whether got is at most slack above base, for every field
// but Problems, which may be one above: a test's one reported problem is
// remembered for good (problems are bounded by the program's call sites,
// not by its locks).
func near(got, base detect.Stats, slack int) bool {
	return got.Nodes <= base.Nodes+slack && got.Edges <= base.Edges+slack &&
		got.Chains <= base.Chains+slack && got.CachedChains <= base.CachedChains+slack &&
		got.Problems <= base.Problems+1 && got.SeenLocks <= base.SeenLocks+slack
}

// onCollect counts l's collection in n.
func onCollect(l sync.Locker, n *atomic.Int32) {
	count := func(int) { n.Add(1) }
	switch x := l.(type) {
	case *mutex.Mutex:
		runtime.AddCleanup(x, count, 0)
	case *monitor.Monitor:
		runtime.AddCleanup(x, count, 0)
	default:
		panic("not a locksmith lock")
	}
}

// TestLocksAreCollected: whatever the detector has recorded about a lock
// (a name, graph nodes and edges, cached chains, reported cycles, wait-for
// and Dump entries, DOT output), it keeps no reference that keeps the lock
// alive, and forgets it all once the lock is collected.
func TestLocksAreCollected(t *testing.T) {
	rec := configure(t, detect.WithMode(detect.Order))
	var anchor mutex.Mutex
	detect.SetName(&anchor, "anchor")
	lockPair(&anchor, new(mutex.Mutex))
	waitForGC(t, "warm-up lock forgotten", func() bool { return true })
	base := detect.ReadStats()

	const n = 500
	var collected atomic.Int32
	func() {
		keep := make([]sync.Locker, 0, 2*n) // until the peak is measured
		defer func() {
			peak := detect.ReadStats()
			t.Logf("with %d live pairs: %+v", n, peak)
			assert.GreaterOrEqual(t, peak.Edges, base.Edges+3*n, "anchor -> a, a -> b, b -> a per pair")
			clear(keep)
		}()
		for i := range n {
			var a, b sync.Locker
			if i%2 == 0 {
				a, b = new(mutex.Mutex), new(monitor.Monitor)
			} else {
				a, b = new(monitor.Monitor), new(mutex.Mutex)
			}
			onCollect(a, &collected)
			onCollect(b, &collected)
			keep = append(keep, a, b)
			detect.SetName(a, "a")
			anchor.Lock()
			lockPair(a, b)
			anchor.Unlock()
			lockPair(b, a) // an inversion: a report naming both
			if i%50 == 0 {
				// A blocked goroutine: registry, Dump and DOT entries.
				a.Lock()
				w := spawn(func() {
					a.Lock()
					a.Unlock()
				})
				waitParked(t, a, w.ID(t))
				var buf bytes.Buffer
				detect.Dump(&buf)
				require.NoError(t, detect.WriteDOT(&buf))
				a.Unlock()
				require.Nil(t, w.wait(t))
			}
		}
	}()
	reps := rec.all(detect.LockOrder)
	require.Len(t, reps, 1, "one report for the one inversion, whatever the pairs it was made on")
	assert.Equal(t, detect.Seen{Times: n, Locks: 2 * n, Goroutines: 1}, reps[0].Seen())

	waitForGC(t, "every lock collected", func() bool { t.Logf("collected %d", collected.Load()); return collected.Load() == 2*n })
	waitForGC(t, "detector back to its baseline", func() bool { return near(detect.ReadStats(), base, 0) })
	t.Logf("after collection: %+v (baseline %+v)", detect.ReadStats(), base)
	runtime.KeepAlive(&anchor)
}

// TestMemoryBounded: many short-lived locks, taken in Order mode nested
// under one long-lived lock (each a new node, a new edge and a new cached
// chain), leave the detector's tables and the heap near where they were
// once the locks are collected.
func TestMemoryBounded(t *testing.T) {
	// Each new lock costs Order mode a validation with a symbolized stack
	// (some microseconds, ten times that under the race detector), so the
	// race build and -short use fewer; collection during the loop keeps
	// the tables bounded all the same.
	n := 200_000
	switch {
	case testing.Short():
		n = 20_000
	case raceEnabled:
		n = 40_000
	}
	configure(t, detect.WithMode(detect.Order))
	var anchor monitor.Monitor
	detect.SetName(&anchor, "anchor")
	lockPair(&anchor, new(mutex.Mutex))
	waitForGC(t, "warm-up", func() bool { return true })
	base := detect.ReadStats()
	heapBefore := baseline()

	var peak detect.Stats
	t0 := time.Now()
	for i := range n {
		var l sync.Locker = new(mutex.Mutex)
		if i%4 == 0 {
			l = new(monitor.Monitor)
		}
		anchor.Lock()
		l.Lock()
		l.Unlock()
		anchor.Unlock()
		if i%(n/10) == 0 {
			if s := detect.ReadStats(); s.Nodes > peak.Nodes {
				peak = s
			}
		}
	}
	t.Logf("%d locks in %v; baseline %+v; largest seen %+v", n, time.Since(t0), base, peak)
	t0 = time.Now()
	waitForGC(t, "tables back near the baseline", func() bool { return near(detect.ReadStats(), base, 64) })
	mib := retainedMiB(heapBefore)
	t.Logf("after collection (%v): %+v; heap in use %+.1f MiB", time.Since(t0), detect.ReadStats(), mib)
	assert.Less(t, mib, 16.0, "heap after GC stays flat")
	runtime.KeepAlive(&anchor)
}

// retainedMiB returns how much more heap is in use, after collection, than
// before.
func retainedMiB(before runtime.MemStats) float64 {
	runtime.GC()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return (float64(after.HeapInuse) - float64(before.HeapInuse)) / (1 << 20)
}

func baseline() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms
}
