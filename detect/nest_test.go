package detect_test

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// The nestings of fresh locks that wait in slots (nest.go). Each test
// holds the drainer, so that what it checks does not depend on when the
// drainer goroutine runs.

func skipWithoutNests(t *testing.T) {
	t.Helper()
	if !fastSites {
		t.Skip("without the frame-pointer walk (purego, before go1.23) a nesting takes the Meta path")
	}
	if detect.RaceBuild {
		t.Skip("under the race detector a nesting takes the Meta path (nest.go)")
	}
}

// allocsPerSingleRun is how ttlcache's suite counts the allocations of
// one call on a fresh cache: one run, GOMAXPROCS 1, runtime.MemStats.
func allocsPerSingleRun(f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.Mallocs
	f()
	runtime.ReadMemStats(&ms)
	return ms.Mallocs - before
}

// TestFirstNestingOneRunAllocatesNothing: a cache-shaped first nesting (a
// read-write lock's write hold under another's, then a Mutex taken alone)
// of locks made beforehand costs one counted run nothing, with the
// drainer free to run, as a suite sees it: each run is a subtest's, and
// the test goroutine blocks between two (inGoroutine), as t.Run does. (A
// goroutine that runs on for a whole time slice can be preempted inside
// the counted run, and with one P the drainer, if it has work, then runs
// there: nest.go says so.) The locks are made before the counted run.
func TestFirstNestingOneRunAllocatesNothing(t *testing.T) {
	skipWithoutNests(t)
	detecttest.Configure(t, detect.WithMode(detect.Order))
	var a, b mutex.Mutex
	lockPair(&a, &b)       // starts the drainer once: its goroutine may be new
	inGoroutine(func() {}) // and lets it run
	const runs = 20
	var counted []uint64
	for range runs {
		var cache, item mutex.RWMutex
		var metrics mutex.Mutex
		if n := allocsPerSingleRun(func() {
			cache.Lock()
			item.Lock()
			item.Unlock()
			cache.Unlock()
			metrics.Lock()
			metrics.Unlock()
		}); n != 0 {
			counted = append(counted, n)
		}
		inGoroutine(func() {}) // between two subtests
	}
	// About one counted run in a thousand sees a drain's allocations (a
	// drainer still at work when the run began): at most one of runs. The
	// Meta path would allocate in every run.
	assert.LessOrEqual(t, len(counted), 1, "runs that allocated: %v", counted)
}

// TestNestingWaitsInOneSlot: the same two locks nested again while their
// nesting waits share its slot; a drain puts the edge in the graph, makes
// both locks' state and frees the slot.
func TestNestingWaitsInOneSlot(t *testing.T) {
	skipWithoutNests(t)
	detecttest.Configure(t, detect.WithMode(detect.Order))
	restore := detect.HoldDrainer()
	defer restore()
	base, _ := detect.NestSlots()
	var a, b mutex.Mutex
	for range 10 {
		lockPair(&a, &b)
	}
	inUse, dirty := detect.NestSlots()
	assert.Equal(t, base+1, inUse, "one slot for ten nestings of one pair")
	assert.Equal(t, 1, dirty, "the slot holds both locks until a drain")
	assert.True(t, detect.HasEdge(&a, &b), "HasEdge drains: the edge is in the graph")
	inUse, dirty = detect.NestSlots()
	assert.Equal(t, base, inUse)
	assert.Zero(t, dirty)
}

// TestNestingParkDrains: a goroutine that parks on a lock a slot holds
// strongly drains the slot first, so that Go's goroutine leak profile
// would see the lock unreachable if nothing else held it.
func TestNestingParkDrains(t *testing.T) {
	skipWithoutNests(t)
	detecttest.Configure(t, detect.WithMode(detect.Order))
	restore := detect.HoldDrainer()
	defer restore()
	var a, b mutex.Mutex
	a.Lock()
	b.Lock() // waits in a slot, which holds b strongly
	_, dirty := detect.NestSlots()
	require.Equal(t, 1, dirty)
	waiter := testutil.Spawn(func() { b.Lock(); b.Unlock() })
	testutil.WaitFor(t, "the waiter's park drained the slot: b is held weakly", func() bool {
		_, dirty := detect.NestSlots()
		return dirty == 0
	})
	b.Unlock()
	a.Unlock()
	require.Nil(t, waiter.Wait(t))
	assert.True(t, detect.HasEdge(&a, &b))
}

// TestNestingTableFull: more fresh nestings than slots, none drained, take
// the Meta path once the table is full, and every edge is in the graph.
func TestNestingTableFull(t *testing.T) {
	skipWithoutNests(t)
	detecttest.Configure(t, detect.WithMode(detect.Order))
	restore := detect.HoldDrainer()
	defer restore()
	const n = 300 // above nestSlots
	outer := make([]mutex.Mutex, n)
	inner := make([]mutex.Mutex, n)
	for i := range n {
		lockPair(&outer[i], &inner[i])
	}
	inUse, _ := detect.NestSlots()
	assert.LessOrEqual(t, inUse, 256)
	for i := range n {
		require.True(t, detect.HasEdge(&outer[i], &inner[i]), "pair %d", i)
	}
}

// TestNestingThirdLock: a goroutine holding a waiting nesting's two locks
// that takes a third records both edges, and the inversion of either is
// reported at the Lock that closes it.
func TestNestingThirdLock(t *testing.T) {
	skipWithoutNests(t)
	for _, invert := range []string{"a under c", "b under c"} {
		t.Run(invert, func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(detect.Order))
			restore := detect.HoldDrainer()
			defer restore()
			var a, b, c mutex.Mutex
			a.Lock()
			b.Lock()
			c.Lock()
			c.Unlock()
			b.Unlock()
			a.Unlock()
			if invert == "a under c" {
				inGoroutine(func() { lockPair(&c, &a) })
			} else {
				inGoroutine(func() { lockPair(&c, &b) })
			}
			assert.Len(t, rec.All(detect.LockOrder), 1)
			assert.True(t, detect.HasEdge(&a, &b))
			assert.True(t, detect.HasEdge(&b, &c))
		})
	}
}

// TestNestingDumpListsHold: Dump lists the inner lock of a waiting
// nesting as held.
func TestNestingDumpListsHold(t *testing.T) {
	skipWithoutNests(t)
	detecttest.Configure(t, detect.WithMode(detect.Order))
	restore := detect.HoldDrainer()
	defer restore()
	var a, b mutex.Mutex
	a.Lock()
	b.Lock()
	var buf bytes.Buffer
	detect.Dump(&buf)
	b.Unlock()
	a.Unlock()
	out := buf.String()
	for _, l := range []*mutex.Mutex{&a, &b} {
		assert.Contains(t, out, fmt.Sprintf("%p", l), "Dump lists %p:\n%s", l, out)
	}
}

// TestNestingStaleDropped: a nesting whose goroutine exits holding both
// locks is dropped by the sweep that finds the goroutine gone, and its
// slot freed: its outer lock's release was never seen.
func TestNestingStaleDropped(t *testing.T) {
	skipWithoutNests(t)
	detecttest.Configure(t, detect.WithMode(detect.Order))
	restore := detect.HoldDrainer()
	defer restore()
	base, _ := detect.NestSlots()
	var a, b mutex.Mutex
	inGoroutine(func() { a.Lock(); b.Lock() })
	inUse, _ := detect.NestSlots()
	require.Equal(t, base+1, inUse)
	testutil.WaitFor(t, "the sweeps drop the exited goroutine's records", func() bool {
		detect.Sweep()
		inUse, _ := detect.NestSlots()
		return inUse == base
	})
	assert.False(t, detect.HasEdge(&a, &b), "the nesting's goroutine exited holding both")
}

// TestNestingInversionAtLock: an inversion of a waiting nesting is
// reported at the Lock that closes it, not at a later release, whichever
// of its locks the inverting goroutine takes first.
func TestNestingInversionAtLock(t *testing.T) {
	skipWithoutNests(t)
	for _, other := range []bool{false, true} {
		t.Run(fmt.Sprintf("other goroutine %v", other), func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(detect.Order))
			restore := detect.HoldDrainer()
			defer restore()
			var a, b mutex.Mutex
			lockPair(&a, &b)
			var atLock int
			invert := func() {
				b.Lock() // b has an edge waiting into it: no lone record
				a.Lock()
				atLock = len(rec.All(detect.LockOrder))
				a.Unlock()
				b.Unlock()
			}
			if other {
				inGoroutine(invert)
			} else {
				invert()
			}
			assert.Equal(t, 1, atLock, "reported when a.Lock closed the cycle")
			assert.Len(t, rec.All(detect.LockOrder), 1)
		})
	}
}

// TestNestingInnerHeldAcrossEpochs: an inner lock held while Order mode
// is left and entered again stays recorded (its lone record is stale and
// dropped, but a held record of a lock with Meta can be checked), so a
// lock taken under it gets its edge and the inversion of that edge is
// reported.
func TestNestingInnerHeldAcrossEpochs(t *testing.T) {
	skipWithoutNests(t)
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	restore := detect.HoldDrainer()
	defer restore()
	var a, b, c mutex.Mutex
	a.Lock()
	b.Lock()                                           // waits in a slot
	detect.Configure(detect.WithMode(detect.Cycles))() // out of Order mode and back
	c.Lock()                                           // b -> c: b is held
	c.Unlock()
	b.Unlock()
	a.Unlock()
	assert.True(t, detect.HasEdge(&b, &c))
	inGoroutine(func() { lockPair(&c, &b) })
	assert.Len(t, rec.All(detect.LockOrder), 1, "%s", rec)
}

// TestNestingDowngradedOuterReportedAtRelease: an RWMonitor taken alone
// for writing and then downgraded (Lock, RLock, Unlock) is shared by
// readers, so an edge can lead into it while its goroutine holds it: a
// lock nested under it takes the Meta path, and an inversion through
// the downgraded lock is reported by the goroutine whose release adds
// its deferred edge, never by a drain on another goroutine.
func TestNestingDowngradedOuterReportedAtRelease(t *testing.T) {
	skipWithoutNests(t)
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	restore := detect.HoldDrainer()
	defer restore()
	var a monitor.RWMonitor
	var b, x mutex.Mutex
	step := make(chan struct{})
	released := make(chan int)
	go func() {
		a.Lock()
		b.Lock()
		b.Unlock()
		a.RLock()
		a.Unlock() // downgraded: a reader of a now
		step <- struct{}{}
		<-step
		a.RUnlock() // adds a -> b, closing a -> b -> x -> a
		released <- len(rec.All(detect.LockOrder))
	}()
	<-step
	inGoroutine(func() { lockPair(&b, &x) })                             // b -> x
	inGoroutine(func() { x.Lock(); a.RLock(); a.RUnlock(); x.Unlock() }) // x -> a
	step <- struct{}{}
	assert.Equal(t, 1, <-released, "reported by the release that closed it")
	assert.Len(t, rec.All(detect.LockOrder), 1)
}
