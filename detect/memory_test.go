//go:build go1.24

package detect_test

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// near reports whether got is at most slack above base, for every field
// but Problems, which may be one above: a test's one reported problem is
// remembered for good (problems are bounded by the program's call sites,
// not by its locks).
func near(got, base detect.Stats, slack int) bool {
	return got.Nodes <= base.Nodes+slack && got.Edges <= base.Edges+slack &&
		got.CachedEdges <= base.CachedEdges+slack &&
		got.Problems <= base.Problems+1 && got.SeenLocks <= base.SeenLocks+slack &&
		got.Metas <= base.Metas+slack
}

// TestLocksAreCollected: whatever the detector has recorded about a lock
// (a name, graph nodes and edges, cached chains, reported cycles, wait-for
// and Dump entries, DOT output), it keeps no reference that keeps the lock
// alive, and forgets it all once the lock is collected.
func TestLocksAreCollected(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	var anchor mutex.Mutex
	detect.SetName(&anchor, "anchor")
	lockPair(&anchor, new(mutex.Mutex))
	// Earlier tests' locks, and the warm-up lock, forgotten: only the
	// anchor is left, so that no collection during the test skews the peak.
	waitForGC(t, "earlier locks forgotten", func() bool { return detect.ReadStats().Nodes <= 1 })
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
			onCollect(t, a, &collected)
			onCollect(t, b, &collected)
			keep = append(keep, a, b)
			detect.SetName(a, "a")
			anchor.Lock()
			lockPair(a, b)
			anchor.Unlock()
			lockPair(b, a) // an inversion: a report naming both
			if i%50 == 0 {
				// A blocked goroutine: registry, Dump and DOT entries.
				a.Lock()
				w := testutil.Spawn(func() {
					a.Lock()
					a.Unlock()
				})
				detecttest.WaitParked(t, a, w.ID(t))
				var buf bytes.Buffer
				detect.Dump(&buf)
				require.NoError(t, detect.WriteDOT(&buf))
				a.Unlock()
				require.Nil(t, w.Wait(t))
			}
		}
	}()
	reps := rec.All(detect.LockOrder)
	require.Len(t, reps, 1, "one report for the one inversion, whatever the pairs it was made on")
	assert.Equal(t, detect.Seen{Times: n, Locks: 2 * n, Goroutines: 1}, reps[0].Seen())

	waitForGC(t, "every lock collected", func() bool { t.Logf("collected %d", collected.Load()); return collected.Load() == 2*n })
	waitForGC(t, "detector back to its baseline", func() bool { return near(detect.ReadStats(), base, 0) })
	t.Logf("after collection: %+v (baseline %+v)", detect.ReadStats(), base)
	runtime.KeepAlive(&anchor)
}

// TestRevivedLocksForgotten: locks in objects that a finalizer revives
// (the collection that queues the finalizer clears the weak pointers into
// the object, and the detector forgets its locks), taken again in Order
// mode, nested, after they were forgotten, are forgotten once more when
// their objects are collected for good: they leave no node, edge or
// metadata behind.
func TestRevivedLocksForgotten(t *testing.T) {
	detecttest.Configure(t, detect.WithMode(detect.Order))
	var anchor mutex.Mutex
	lockPair(&anchor, new(mutex.Mutex))
	waitForGC(t, "earlier locks forgotten", func() bool { return detect.ReadStats().Nodes <= 1 })
	base := detect.ReadStats()

	type object struct {
		mu mutex.Mutex
		_  *byte
	}
	const n = 100
	revived := make(chan *object, n)
	var collected atomic.Int32
	for range n {
		o := new(object)
		lockPair(&anchor, &o.mu)
		runtime.SetFinalizer(o, func(o *object) {
			runtime.AddCleanup(o, func(int) { collected.Add(1) }, 0) // for good this time
			revived <- o
		})
	}
	objs := make([]*object, 0, n)
	waitForGC(t, "every object revived and its lock forgotten", func() bool {
		for len(revived) > 0 {
			objs = append(objs, <-revived)
		}
		return len(objs) == n && near(detect.ReadStats(), base, 0)
	})
	for _, o := range objs {
		lockPair(&anchor, &o.mu) // a new node and edge
	}
	assert.GreaterOrEqual(t, detect.ReadStats().Nodes, base.Nodes+n)
	clear(objs)
	waitForGC(t, "every object collected", func() bool { return collected.Load() == n })
	waitForGC(t, "detector back to its baseline", func() bool { return near(detect.ReadStats(), base, 0) })
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
	detecttest.Configure(t, detect.WithMode(detect.Order))
	var anchor monitor.Monitor
	detect.SetName(&anchor, "anchor")
	lockPair(&anchor, new(mutex.Mutex))
	waitForGC(t, "warm-up", func() bool { return true })
	base := detect.ReadStats()
	heapBefore := testutil.HeapBaseline()

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
	mib := testutil.RetainedMiB(heapBefore)
	t.Logf("after collection (%v): %+v; heap in use %+.1f MiB", time.Since(t0), detect.ReadStats(), mib)
	assert.Less(t, mib, 16.0, "heap after GC stays flat")
	runtime.KeepAlive(&anchor)
}

// TestExitedHoldersReclaimed: goroutines that exit holding a lock of their
// own (Go runs no code at goroutine exit, so the lock stays held) leave
// nothing behind once their locks are collected, in every mode: the locks
// are collected, Order mode's per-goroutine records are reclaimed, and the
// heap after GC stays flat.
func TestExitedHoldersReclaimed(t *testing.T) {
	n := 100_000
	if testing.Short() || raceEnabled {
		n = 20_000
	}
	for _, mode := range []detect.Mode{detect.Off, detect.Cycles, detect.Order} {
		t.Run(mode.String(), func(t *testing.T) {
			detecttest.Configure(t, detect.WithMode(mode))
			waitForGC(t, "records of earlier tests reclaimed", func() bool { return detect.ReadStats().HoldingGs == 0 })
			heapBefore := testutil.HeapBaseline()
			var collected atomic.Int32
			const batch = 1000
			for i := 0; i < n; i += batch {
				var wg sync.WaitGroup
				wg.Add(batch)
				for range batch {
					go func() {
						defer wg.Done()
						l := new(mutex.Mutex)
						onCollect(t, l, &collected)
						l.Lock() // and exit holding it
					}()
				}
				wg.Wait()
			}
			waitForGC(t, "every lock collected", func() bool { return collected.Load() == int32(n) })
			waitForGC(t, "every record reclaimed", func() bool { return detect.ReadStats().HoldingGs == 0 })
			mib := testutil.RetainedMiB(heapBefore)
			t.Logf("%d goroutines exited holding a lock: heap in use %+.1f MiB; %+v", n, mib, detect.ReadStats())
			assert.Less(t, mib, 4.0, "heap after GC stays flat")
		})
	}
}

// TestModeSwitchWhileHeldReclaimed: locks taken in Order mode and released
// after the detector has left Order mode (so the release is not seen), by
// goroutines that then exit or exit still holding them, are collected, and
// their goroutines' records reclaimed; so are goroutines whose records
// name a long-lived lock they no longer hold.
func TestModeSwitchWhileHeldReclaimed(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 500
	}
	detecttest.Configure(t, detect.WithMode(detect.Order))
	waitForGC(t, "records of earlier tests reclaimed", func() bool { return detect.ReadStats().HoldingGs == 0 })
	var shared mutex.Mutex // long-lived
	heapBefore := testutil.HeapBaseline()
	var collected atomic.Int32
	holding := make(chan struct{}, n)
	switched := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(n + 1)
	for i := range n {
		go func() {
			defer wg.Done()
			own := new(mutex.Mutex)
			onCollect(t, own, &collected)
			own.Lock() // in Order mode: a record
			holding <- struct{}{}
			<-switched
			if i%2 == 0 {
				own.Unlock() // in Cycles mode: not seen
			}
		}()
	}
	for range n {
		testutil.Await(t, holding, "goroutine holding its lock")
	}
	// One more, holding the long-lived lock across the switch.
	sharedHeld := make(chan struct{})
	go func() {
		defer wg.Done()
		shared.Lock()
		sharedHeld <- struct{}{}
		<-switched
		shared.Unlock()
	}()
	testutil.Await(t, sharedHeld, "goroutine holding the shared lock")
	assert.GreaterOrEqual(t, detect.ReadStats().HoldingGs, n+1)
	restore := detect.Configure(detect.WithMode(detect.Cycles))
	close(switched)
	wg.Wait()
	restore() // back to Order mode

	waitForGC(t, "every lock collected", func() bool { return collected.Load() == int32(n) })
	waitForGC(t, "every record reclaimed", func() bool { return detect.ReadStats().HoldingGs == 0 })
	mib := testutil.RetainedMiB(heapBefore)
	t.Logf("after %d goroutines across a mode switch: heap in use %+.1f MiB; %+v", n, mib, detect.ReadStats())
	assert.Less(t, mib, 4.0, "heap after GC stays flat")
	// The shared lock works as ever, with no stale record behind.
	lockPair(&shared, new(mutex.Mutex))
	runtime.KeepAlive(&shared)
}

// TestIdleRecords: a goroutine keeps its record, idle, after releasing its
// last lock, so that its next first lock claims nothing; short-lived
// goroutines that release what they take reuse the idle records of
// goroutines gone before them instead of filling the table and spilling
// into the overflow maps; and the sweeper frees idle records once
// collections run.
func TestIdleRecords(t *testing.T) {
	detecttest.Configure(t, detect.WithMode(detect.Order))
	waitForGC(t, "records of earlier tests reclaimed", func() bool { return detect.ReadStats().ClaimedGs == 0 })
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no sweep during the run
	var shared mutex.Mutex
	const n = 3 * 4096 // goroutines, one after another: more than the table's slots
	for range n {
		done := make(chan struct{})
		go func() {
			defer close(done)
			shared.Lock()
			shared.Unlock()
		}()
		<-done
	}
	st := detect.ReadStats()
	t.Logf("after %d goroutines: %+v", n, st)
	assert.Zero(t, st.HoldingGs)
	assert.Positive(t, st.ClaimedGs, "records stay claimed, idle")
	assert.Zero(t, st.OverflowGs, "idle records reused")
	waitForGC(t, "idle records freed", func() bool { return detect.ReadStats().ClaimedGs == 0 })
	lockPair(&shared, new(mutex.Mutex)) // and claimed again
	assert.Equal(t, 1, detect.ReadStats().ClaimedGs)
}

// TestRecordsAwayFromHome: a goroutine whose home slot holds another
// goroutine's record, in use, keeps its own record in another slot, which
// the home slot counts; it finds the record again for every acquisition
// and release, and the edge it adds there catches an inversion. Once the
// collector's sweep has freed the records kept away, the count is back to
// zero and a goroutine of that home takes the home slot itself.
func TestRecordsAwayFromHome(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	waitForGC(t, "records of earlier tests reclaimed", func() bool { return detect.ReadStats().HoldingGs == 0 })
	var first, x, y mutex.Mutex
	homeCh := make(chan int, 1)
	release := make(chan struct{})
	holder := testutil.Spawn(func() {
		first.Lock()
		slot, _ := detect.Home()
		homeCh <- slot
		<-release
		first.Unlock()
	})
	home := testutil.Await(t, homeCh, "first goroutine holding its lock")

	// sameHome runs f in a goroutine whose home slot is home, starting
	// goroutines (whose IDs go up one by one) until one is.
	sameHome := func(f func()) {
		t.Helper()
		for range 64 * 1024 {
			done := make(chan bool)
			go func() {
				if slot, _ := detect.Home(); slot != home {
					done <- false
					return
				}
				f()
				done <- true
			}()
			if <-done {
				return
			}
		}
		t.Fatalf("no goroutine had home slot %d", home)
	}

	var atHome []bool
	var away []int
	sameHome(func() {
		x.Lock()
		_, h := detect.Home()
		atHome = append(atHome, h)
		away = append(away, detect.HomeAway(home))
		y.Lock() // x -> y, recorded in the record kept away
		y.Unlock()
		x.Unlock()
	})
	assert.Equal(t, []bool{false}, atHome, "the home slot is in use: the record is kept elsewhere")
	assert.Equal(t, []int{1}, away, "and the home slot counts it")
	assert.True(t, detect.HasEdge(&x, &y))
	assert.Equal(t, 1, detect.ReadStats().HoldingGs, "only the first goroutine holds a lock: the releases found the record")

	sameHome(func() {
		y.Lock()
		x.Lock() // the inversion
		x.Unlock()
		y.Unlock()
	})
	assert.Len(t, rec.All(detect.LockOrder), 1, "the inversion of the edge recorded away from home")

	close(release)
	require.Nil(t, holder.Wait(t))
	waitForGC(t, "records kept away freed", func() bool { return detect.HomeAway(home) == 0 })
	atHome = nil
	sameHome(func() {
		x.Lock()
		_, h := detect.Home()
		atHome = append(atHome, h)
		x.Unlock()
	})
	assert.Equal(t, []bool{true}, atHome, "a goroutine of that home takes the home slot")
}

// TestMetaSlotsNotReused: the detection state of a collected lock is never
// handed to another lock, even when its slab is reused by nothing else: a
// stale *core.Meta held somewhere (here, by the test) can never alias a
// newer lock's.
func TestMetaSlotsNotReused(t *testing.T) {
	detecttest.Configure(t, detect.WithMode(detect.Order))
	const n = 4 * detect.SlabSize
	old := map[*core.Meta]bool{}
	var outer mutex.Mutex // a lock taken alone gets no Meta: each is nested
	func() {
		for range n {
			l := new(mutex.Mutex)
			lockPair(&outer, l)
			old[detect.PeekMeta(l)] = true
		}
	}()
	require.Len(t, old, n, "one Meta per lock")
	waitForGC(t, "every lock forgotten", func() bool {
		for m := range old {
			if !m.Gone() {
				return false
			}
		}
		return true
	})
	for range 2 * n {
		l := new(mutex.Mutex)
		lockPair(&outer, l)
		m := detect.PeekMeta(l)
		require.False(t, old[m], "a forgotten lock's Meta handed out again")
		old[m] = true
	}
}

// TestForgottenSlabNotKeptByInlineList: a lock nested under a live lock,
// then forgotten, leaves nothing that keeps its slab reachable, also when
// the live lock's edge list has outgrown the array inside its node (whose
// first entry was the forgotten lock's edge, inside the forgotten slab).
func TestForgottenSlabNotKeptByInlineList(t *testing.T) {
	for _, edges := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("%d out-edges", edges), func(t *testing.T) {
			detecttest.Configure(t, detect.WithMode(detect.Order))
			live := new(mutex.Mutex)
			// live's state is made now, in a slab that is not a's (nested:
			// a lock taken alone gets none).
			lockPair(new(mutex.Mutex), live)
			fillSlab()
			var w weak.Pointer[core.Meta]
			func() {
				a := new(mutex.Mutex)
				lockPair(live, a)
				for range edges - 1 {
					lockPair(live, new(mutex.Mutex))
				}
				w = weak.Make(detect.PeekMeta(a))
			}()
			fillSlab() // no lock made later shares a's slab
			waitForGC(t, "the forgotten lock's slab collected", func() bool { return w.Value() == nil })
			runtime.KeepAlive(live)
		})
	}
}

// TestForgottenChainCollected: objects in a list, each nesting its
// successor's lock and a temporary one under its own, all collected but
// the head: the heap goes back to about where it was, not held a slab at
// a time, each by the next, from the one live lock.
func TestForgottenChainCollected(t *testing.T) {
	detecttest.Configure(t, detect.WithMode(detect.Order))
	head := new(mutex.Mutex)
	base := detect.ReadStats()
	heap := func() int64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	before := heap()
	const n = 20000
	func() {
		prev := new(mutex.Mutex)
		lockPair(head, prev)
		lockPair(head, new(mutex.Mutex))
		for range n {
			next := new(mutex.Mutex)
			lockPair(prev, next)
			lockPair(prev, new(mutex.Mutex))
			prev = next
		}
	}()
	waitForGC(t, "the chain forgotten", func() bool { return detect.ReadStats().Nodes <= base.Nodes+1 })
	grown := heap() - before
	// Kept alive, the 2n locks' states are about 11 MB (256 B each plus
	// their edges and weak handles); collected, a few hundred KB remain.
	assert.Less(t, grown, int64(4<<20), "heap still grown by %d KB after %d locks were forgotten", grown>>10, 2*n)
	runtime.KeepAlive(head)
}

// TestReportedCycleLocksCollected: the locks of a reported inversion are
// collected once unreachable, like any other: nothing in the detector's
// search state keeps their detection state (and its slab) reachable.
func TestReportedCycleLocksCollected(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	fillSlab()
	var w weak.Pointer[core.Meta]
	func() {
		a, b := new(mutex.Mutex), new(mutex.Mutex)
		lockPair(a, b)
		lockPair(b, a)
		w = weak.Make(detect.PeekMeta(a))
	}()
	require.Len(t, rec.All(), 1, "the inversion is reported")
	fillSlab()
	waitForGC(t, "a reported lock's state collected", func() bool { return w.Value() == nil })
}

// fillSlab locks a slab's worth of new locks in Order mode, which the
// next collections reclaim together: a lock made before it and one made
// after it do not share a slab.
//
// Each is nested under one more new lock: a lock taken alone gets no
// state (lone.go).
func fillSlab() {
	outer := new(mutex.Mutex)
	for range detect.SlabSize {
		lockPair(outer, new(mutex.Mutex))
	}
}
