package detectdiff_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sasha-s/go-deadlock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/mutex"
)

// The differential test runs every scenario of go-deadlock v0.3.9's own
// test suite (deadlock_test.go, trylock_test.go, gc_go124_test.go and the
// non-synctest case of synctest_comparison_test.go), ported to our types,
// against both go-deadlock and locksmith, plus the cases
// that go-deadlock misses. What go-deadlock catches in a scenario that is
// a real or potential deadlock in our port, we must catch too; where its
// report is a false positive in our port, we must not report.
//
// Ports: in this table go-deadlock's RWMutex read locks become Lock on a
// Mutex or a Monitor, the exclusive locks' side of each scenario; the
// same scenarios on our read-write locks, and the read-write cases beyond
// go-deadlock's suite, are in rw_differential_test.go. Its sleeps inside
// critical sections become runtime.Gosched; its sleeps to let a goroutine block
// become waits for the goroutine's state; a recursive Lock, which
// go-deadlock reports and then hangs in, panics at once with
// mutex.ErrRecursiveLock here, which counts as caught.
//
// go-deadlock's configuration is the mutable global deadlock.Opts. Each
// scenario sets it, with OnPotentialDeadlock counting into a callback
// (never os.Exit) and LogBuf captured, and restores it only after every
// goroutine that could read it has finished; its own timers read Opts only
// before they call OnPotentialDeadlock, which the test waits for. The
// scenarios run one at a time, never in parallel. Where go-deadlock's
// timer would go on reading Opts for a wait it never reports (a failed
// TryLock erases the holder's record, and its timer then re-arms itself
// forever), the scenario runs in a child process that never restores Opts.

// gdHarness is go-deadlock configured for one scenario.
type gdHarness struct {
	hits atomic.Int32
	poke chan struct{} // buffered(1): OnPotentialDeadlock was called
	log  lockedBuffer
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// setGoDeadlock sets go-deadlock's Opts for a scenario: wait timeout
// (0 for none), lock-order detection on or off. It does not restore them.
func setGoDeadlock(timeout time.Duration, order bool) *gdHarness {
	h := &gdHarness{poke: make(chan struct{}, 1)}
	deadlock.Opts.DeadlockTimeout = timeout
	deadlock.Opts.DisableLockOrderDetection = !order
	deadlock.Opts.Disable = false
	deadlock.Opts.OnPotentialDeadlock = func() {
		h.hits.Add(1)
		select {
		case h.poke <- struct{}{}:
		default:
		}
	}
	deadlock.Opts.LogBuf = &h.log
	return h
}

// useGoDeadlock is setGoDeadlock restored when the test ends. The test
// must have joined every goroutine that uses go-deadlock by then.
func useGoDeadlock(t *testing.T, timeout time.Duration, order bool) *gdHarness {
	saved := deadlock.Opts
	t.Cleanup(func() { deadlock.Opts = saved })
	return setGoDeadlock(timeout, order)
}

// waitHits waits until go-deadlock has reported n times.
func (h *gdHarness) waitHits(t testing.TB, n int) {
	t.Helper()
	timer := time.NewTimer(testutil.Liveness)
	defer timer.Stop()
	for int(h.hits.Load()) < n {
		select {
		case <-h.poke:
		case <-timer.C:
			t.Fatalf("go-deadlock: %d reports expected, got %d:\n%s", n, h.hits.Load(), h.log.String())
		}
	}
}

func (h *gdHarness) count() int { return int(h.hits.Load()) }

// differential is one scenario, run on both sides. Each side returns how
// many problems it reported: reports, plus recursive-locking panics on
// our side.
type differential struct {
	name   string
	origin string // the go-deadlock test it ports, or "beyond its suite"
	// real: the scenario is a real or potential deadlock in our port, so
	// whatever go-deadlock catches we must catch. Otherwise, what
	// go-deadlock reports is a false positive for our types.
	real       bool
	theirs     func(t *testing.T) int
	ours       func(t *testing.T) int
	wantTheirs int // -1: at least one
	wantOurs   int
}

func TestDifferentialGoDeadlock(t *testing.T) { runDifferentials(t, differentials) }

// runDifferentials runs each scenario on both sides and checks the
// counts, then logs a summary table.
func runDifferentials(t *testing.T, ds []differential) {
	var summary strings.Builder
	fmt.Fprintf(&summary, "%-36s %-64s %12s %10s\n", "scenario", "origin", "go-deadlock", "locksmith")
	for _, d := range ds {
		t.Run(d.name, func(t *testing.T) {
			var theirs, ours int
			require.True(t, t.Run("go-deadlock", func(t *testing.T) {
				theirs = d.theirs(t)
				if d.wantTheirs < 0 {
					assert.Positive(t, theirs, "go-deadlock reports")
				} else {
					assert.Equal(t, d.wantTheirs, theirs, "go-deadlock reports")
				}
			}))
			require.True(t, t.Run("locksmith", func(t *testing.T) {
				ours = d.ours(t)
				assert.Equal(t, d.wantOurs, ours, "locksmith reports")
			}))
			if d.real && theirs > 0 {
				assert.Positive(t, ours, "go-deadlock catches this deadlock; so must we")
			}
			if !d.real {
				assert.Zero(t, ours, "not a deadlock for our types: no report")
			}
			fmt.Fprintf(&summary, "%-36s %-64s %12d %10d\n", d.name, d.origin, theirs, ours)
		})
	}
	t.Logf("reports per scenario:\n%s", summary.String())
}

var differentials = []differential{
	{
		name: "NoDeadlocks", origin: "deadlock_test.go TestNoDeadlocks",
		theirs: noDeadlocks(goDeadlockKit), ours: noDeadlocks(locksmithExclusiveKit), wantTheirs: 0, wantOurs: 0,
	},
	{
		name: "LockOrder", origin: "deadlock_test.go TestLockOrder", real: true,
		theirs: lockOrder(goDeadlockKit, ""), ours: lockOrder(locksmithExclusiveKit, "rwmonitor"), wantTheirs: 1, wantOurs: 1,
	},
	{
		name: "ConcurrentLockOrder", origin: "deadlock_test.go TestConcurrentLockOrderDetection", real: true,
		theirs: concurrentLockOrder(goDeadlockKit), ours: concurrentLockOrder(locksmithExclusiveKit), wantTheirs: -1, wantOurs: 1,
	},
	{
		name: "HardDeadlock", origin: "deadlock_test.go TestHardDeadlock", real: true,
		theirs: hardDeadlock(goDeadlockKit, false), ours: hardDeadlock(locksmithExclusiveKit, false), wantTheirs: 1, wantOurs: 1,
	},
	{
		name: "HardDeadlockTryLock", origin: "trylock_test.go TestHardDeadlockTryLock", real: true,
		theirs: hardDeadlock(goDeadlockKit, true), ours: hardDeadlock(locksmithExclusiveKit, true), wantTheirs: 1, wantOurs: 1,
	},
	{
		name: "NormalDeadlockDetection", origin: "synctest_comparison_test.go TestNormalDeadlockDetection", real: true,
		theirs: normalDeadlockDetection(goDeadlockKit), ours: normalDeadlockDetection(locksmithExclusiveKit), wantTheirs: 1, wantOurs: 1,
	},
	{
		name: "RWMutex", origin: "deadlock_test.go TestRWMutex", real: true,
		theirs: twoWaiters(goDeadlockKit, false), ours: twoWaiters(locksmithExclusiveKit, false), wantTheirs: 2, wantOurs: 2,
	},
	{
		name: "RWMutexTryLock", origin: "trylock_test.go TestRWMutexTryLock", real: true,
		theirs: twoWaiters(goDeadlockKit, true), ours: twoWaiters(locksmithExclusiveKit, true), wantTheirs: 2, wantOurs: 2,
	},
	{
		name: "StarvedRLockMultipleReaders", origin: "deadlock_test.go TestStarvedRLockMultipleReaders", real: true,
		theirs: gdStarved, ours: lsStarved, wantTheirs: 2, wantOurs: 2,
	},
	{
		name: "ManyReadersFewWriters", origin: "deadlock_test.go TestManyReadersFewWriters",
		theirs: manyReaders(goDeadlockKit), ours: manyReaders(locksmithExclusiveKit), wantTheirs: 0, wantOurs: 0,
	},
	{
		name: "DeadlockTimeoutTransientNoHolder", origin: "deadlock_test.go TestDeadlockTimeoutTransientNoHolder",
		theirs: shortWait(goDeadlockKit), ours: shortWait(locksmithExclusiveKit), wantTheirs: 0, wantOurs: 0,
	},
	{
		name: "LockDuplicate", origin: "deadlock_test.go TestLockDuplicate", real: true,
		theirs: gdLockDuplicate(false), ours: lsLockDuplicate(false), wantTheirs: 2, wantOurs: 2,
	},
	{
		name: "TryLockDuplicate", origin: "trylock_test.go TestTryLockDuplicate", real: true,
		theirs: gdLockDuplicate(true), ours: lsLockDuplicate(true), wantTheirs: 2, wantOurs: 2,
	},
	{
		name: "TryLockNoDeadlocks", origin: "trylock_test.go TestTryLockNoDeadlocks",
		theirs: tryLockNoDeadlocks(goDeadlockKit), ours: tryLockNoDeadlocks(locksmithExclusiveKit), wantTheirs: 0, wantOurs: 0,
	},
	{
		name: "MutexTryLock", origin: "trylock_test.go TestMutexTryLock",
		theirs: gdMutexTryLock, ours: lsMutexTryLock, wantTheirs: 0, wantOurs: 0,
	},
	{
		// A TryLock cannot block: a TryLock of b while holding a is no
		// a -> b dependency, so b then a is no inversion. go-deadlock's
		// report is a false positive.
		name: "TryLockOrder", origin: "trylock_test.go TestTryLockOrder",
		theirs: tryLockOrder(goDeadlockKit, ""), ours: tryLockOrder(locksmithExclusiveKit, "rwmonitor"), wantTheirs: 1, wantOurs: 0,
	},
	{
		name: "OrderMapGC", origin: "gc_go124_test.go TestOrderMapGC",
		theirs: orderMapGC[deadlock.Mutex](goDeadlockKit, "go-deadlock"), ours: orderMapGC[mutex.Mutex](locksmithExclusiveKit, "locksmith"), wantTheirs: 0, wantOurs: 0,
	},
	{
		name: "TwoGoroutineDeadlock", origin: "beyond its suite: a real deadlock, no timeout", real: true,
		theirs: gdCycle(2), ours: lsCycle(2), wantTheirs: 1, wantOurs: 1,
	},
	{
		name: "ThreeGoroutineDeadlock", origin: "beyond its suite: A->B->C->A, a real deadlock", real: true,
		theirs: gdCycle(3), ours: lsCycle(3), wantTheirs: 0, wantOurs: 1,
	},
	{
		name: "ThreeLockOrderCycle", origin: "beyond its suite: A->B->C->A, potential", real: true,
		theirs: threeLockOrder(goDeadlockKit), ours: threeLockOrder(locksmithExclusiveKit), wantTheirs: 0, wantOurs: 1,
	},
	{
		name: "FailedTryLockHidesHolder", origin: "beyond its suite: failed TryLock erases the holder", real: true,
		theirs: hiddenHolderOrder(goDeadlockKit), ours: hiddenHolderOrder(locksmithExclusiveKit), wantTheirs: 0, wantOurs: 1,
	},
	{
		name: "FailedTryLockHidesHolderWait", origin: "beyond its suite: ... so a long wait is never reported", real: true,
		theirs: gdHiddenHolderWait, ours: lsHiddenHolderWait, wantTheirs: 0, wantOurs: 1,
	},
	{
		// Recursive read locking is allowed by sync.RWMutex (while no
		// writer waits) and re-entry by a Monitor: go-deadlock reports it.
		name: "Reentry", origin: "beyond its suite: re-entry reported as a deadlock",
		theirs: reentry(goDeadlockKit), ours: reentry(locksmithExclusiveKit), wantTheirs: 1, wantOurs: 0,
	},
}

// --- go-deadlock's side -------------------------------------------------

func gdStarved(t *testing.T) int {
	k := goDeadlockKit
	rep := k.configure(t, 20*time.Millisecond, false)
	a := k.rw("rwmonitor", "a")
	a.RLock()
	testutil.OnOtherOK(t, func() {
		a.RLock()
		a.RUnlock()
	})
	return writerAndReaderWait(t, k, rep, a)
}

// gdLockDuplicate: recursive locking, reported, after which go-deadlock
// blocks for good; the test unlocks from its own goroutine (sync's rules
// allow it) to let the goroutines finish.
func gdLockDuplicate(try bool) func(t *testing.T) int {
	return func(t *testing.T) int {
		h := useGoDeadlock(t, 0, true)
		var a deadlock.RWMutex
		var b deadlock.Mutex
		w1 := testutil.Spawn(func() {
			take(try, a.RLock, a.TryRLock, "TryRLock")
			a.Lock() // reported; blocks until the test's RUnlock
			a.Unlock()
		})
		w2 := testutil.Spawn(func() {
			take(try, b.Lock, b.TryLock, "TryLock")
			b.Lock() // reported; blocks until the test's Unlock
			b.Unlock()
		})
		h.waitHits(t, 2)
		a.RUnlock()
		b.Unlock()
		require.Nil(t, w1.Wait(t))
		require.Nil(t, w2.Wait(t))
		return h.count()
	}
}

func gdMutexTryLock(t *testing.T) int {
	h := useGoDeadlock(t, deadlock.Opts.DeadlockTimeout, false)
	var mu deadlock.Mutex
	require.True(t, mu.TryLock())
	require.False(t, mu.TryLock())
	mu.Unlock()
	return h.count()
}

// gdCycle: n goroutines, each holding its lock and then locking the
// next; go-deadlock checks lock order by pairs, so it sees n == 2 and not
// more. With no wait timeout the goroutines then hang; the test frees them
// by unlocking lock 0 from its own goroutine.
func gdCycle(n int) func(t *testing.T) int {
	return func(t *testing.T) int {
		h := useGoDeadlock(t, 0, true)
		locks := make([]deadlock.Mutex, n)
		held := make(chan struct{}, n)
		goOn := make(chan struct{})
		procs := make([]*testutil.Proc, n)
		for i := range procs {
			procs[i] = testutil.Spawn(func() {
				locks[i].Lock()
				held <- struct{}{}
				<-goOn
				locks[(i+1)%n].Lock()
				locks[(i+1)%n].Unlock()
				if i != 0 { // lock 0 is unlocked by the test
					locks[i].Unlock()
				}
			})
		}
		for range n {
			testutil.Await(t, held, "lock held")
		}
		close(goOn)
		for _, p := range procs {
			gdWaitMutex(t, p.ID(t))
		}
		got := h.count() // go-deadlock checks before blocking: final
		locks[0].Unlock()
		for _, p := range procs {
			require.Nil(t, p.Wait(t))
		}
		return got
	}
}

// gdHiddenHolderWait runs the child process goDeadlockHiddenHolderChild.
func gdHiddenHolderWait(t *testing.T) int {
	stdout, _ := runHelper(t, "godeadlock-hidden-holder")
	i := strings.Index(stdout, "reports=")
	require.GreaterOrEqual(t, i, 0, stdout)
	line := stdout[i+len("reports="):]
	n, err := strconv.Atoi(strings.TrimSpace(line[:strings.IndexByte(line, '\n')]))
	require.NoError(t, err)
	return n
}

// goDeadlockHiddenHolderChild: the test holds mu; another goroutine's
// failed TryLock erases that record; a goroutine then waits on mu for
// ever longer than the timeout: go-deadlock's timer finds no holder and
// re-arms itself each time, without a report. As a clock, a second
// goroutine waits, later, on another lock with a known holder: its report
// comes after the first waiter's timer has fired. It prints the number of
// reports about mu.
func goDeadlockHiddenHolderChild(t *testing.T) {
	h := setGoDeadlock(20*time.Millisecond, true) // never restored: this process ends
	var mu, clock deadlock.Mutex
	mu.Lock()
	testutil.OnOtherOK(t, func() { assert.False(t, mu.TryLock()) })
	w := testutil.Spawn(func() {
		mu.Lock()
		mu.Unlock()
	})
	gdWaitMutex(t, w.ID(t))
	clock.Lock()
	w2 := testutil.Spawn(func() {
		clock.Lock()
		clock.Unlock()
	})
	h.waitHits(t, 1)
	log := h.log.String()
	aboutMu := strings.Count(log, fmt.Sprintf("lock %p\n", &mu))
	require.Contains(t, log, fmt.Sprintf("lock %p\n", &clock), "the clock's report")
	clock.Unlock()
	mu.Unlock()
	require.Nil(t, w.Wait(t))
	require.Nil(t, w2.Wait(t))
	fmt.Fprintf(os.Stdout, "reports=%d\n", aboutMu)
}

// --- locksmith's side ---------------------------------------------------

// lsConfigure is configure in Order mode (go-deadlock's default checks
// both lock order and waits) with the given wait timeout (0 for none).
func lsConfigure(t *testing.T, wait time.Duration) *detecttest.Recorder {
	return detecttest.Configure(t, detect.WithMode(detect.Order), detect.WithWaitTimeout(wait))
}

// checkWaitReports checks that every report is a WaitTimeout naming the
// holder.
func checkWaitReports(t *testing.T, rec *detecttest.Recorder, holder int64) {
	t.Helper()
	for _, r := range rec.All() {
		require.Equal(t, detect.WaitTimeout, r.Kind, "%s", r)
		require.Len(t, r.Steps, 2, "%s", r)
		assert.Equal(t, holder, r.Steps[1].Goroutine, "the holder")
		_, ok := detecttest.OwnFrame(r.Steps[1].Stack, ownPrefix)
		assert.True(t, ok, "the holder's stack")
	}
}

// lsStarved: the holder's record must survive a second hold taken and
// dropped (go-deadlock's bug was a second reader's RUnlock erasing the
// first reader's record): a re-entry of the Monitor, and another
// goroutine's failed TryLock.
func lsStarved(t *testing.T) int {
	k := locksmithExclusiveKit
	rep := k.configure(t, 20*time.Millisecond, true)
	mon := k.rw("rwmonitor", "mon")
	mon.Lock()
	mon.Lock()
	mon.Unlock()
	testutil.OnOtherOK(t, func() { assert.False(t, mon.TryLock()) })
	return writerAndReaderWait(t, k, rep, mon)
}

// lsLockDuplicate: recursive locking of a Mutex, after Lock or TryLock,
// panics at once with ErrRecursiveLock and leaves the Mutex held by its
// owner, who unlocks it.
func lsLockDuplicate(try bool) func(t *testing.T) int {
	return func(t *testing.T) int {
		lsConfigure(t, 0)
		var caught atomic.Int32
		var a, b mutex.Mutex
		dup := func(m *mutex.Mutex) func() {
			return func() {
				take(try, m.Lock, m.TryLock, "TryLock")
				if err, ok := testutil.Catch(m.Lock).(error); ok && errors.Is(err, mutex.ErrRecursiveLock) {
					caught.Add(1)
				}
				m.Unlock()
			}
		}
		w1, w2 := testutil.Spawn(dup(&a)), testutil.Spawn(dup(&b))
		require.Nil(t, w1.Wait(t))
		require.Nil(t, w2.Wait(t))
		return int(caught.Load())
	}
}

func lsMutexTryLock(t *testing.T) int {
	rec := lsConfigure(t, 0)
	var mu mutex.Mutex
	require.True(t, mu.TryLock())
	require.False(t, mu.TryLock())
	mu.Unlock()
	return len(rec.All())
}

func lsCycle(n int) func(t *testing.T) int {
	return func(t *testing.T) int {
		rec := lsConfigure(t, 0)
		locks := make([]mutex.Mutex, n)
		held := make(chan struct{}, n)
		next := make([]chan struct{}, n)
		procs := make([]*testutil.Proc, n)
		for i := range procs {
			next[i] = make(chan struct{})
			procs[i] = testutil.Spawn(func() {
				locks[i].Lock()
				defer locks[i].Unlock()
				held <- struct{}{}
				<-next[i]
				locks[(i+1)%n].Lock()
				locks[(i+1)%n].Unlock()
			})
		}
		for range n {
			testutil.Await(t, held, "lock held")
		}
		for i := 0; i < n-1; i++ {
			close(next[i])
			detecttest.WaitParked(t, &locks[i+1], procs[i].ID(t))
		}
		close(next[n-1])
		detecttest.DeadlockError(t, procs[n-1].Wait(t))
		for _, p := range procs[:n-1] {
			require.Nil(t, p.Wait(t))
		}
		assert.Len(t, rec.All(detect.Deadlock), len(rec.All()))
		return len(rec.All())
	}
}

func lsHiddenHolderWait(t *testing.T) int {
	rec := lsConfigure(t, 20*time.Millisecond)
	var mu mutex.Mutex
	mu.Lock()
	testutil.OnOtherOK(t, func() { assert.False(t, mu.TryLock()) })
	w := testutil.Spawn(func() {
		mu.Lock()
		mu.Unlock()
	})
	rec.WaitN(t, detect.WaitTimeout, 1)
	mu.Unlock()
	require.Nil(t, w.Wait(t))
	checkWaitReports(t, rec, testutil.GoroutineID())
	return len(rec.All())
}
