package detectdiff_test

import (
	"errors"
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
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// The read-write side of the differential test: go-deadlock's scenarios
// that use its RWMutex, run on mutex.RWMutex and monitor.RWMonitor (their
// go-deadlock side is the original, shared with differential_test.go's
// exclusive-lock ports), and the read-write cases beyond its suite:
// recursive read locking with and without a writer queued, the
// read-to-write upgrade, the writer-preference cycle, read-only sharing
// and inversions between read and write sides.
//
// Where the detectors disagree by design, the scenario asserts our
// documented behaviour and its comment says why. Two disagreements run
// through the table: go-deadlock treats RLock as Lock for lock order, so
// it reports read-only sharing, which cannot deadlock while no writer
// exists; and monitor.RWMonitor lets a reader re-enter, also past a
// queued writer, so a recursive RLock is no deadlock on it.
//
// Order mode's read rule. The scenarios marked "[read rule]" depend on
// how Order mode orders read acquisitions: a read adds edges like a
// write, and a cycle is reported when at every lock in it the holding or
// the acquiring side is a write or the lock has been write-locked
// somewhere; a read-only cycle whose lock is write-locked after the cycle
// formed is reported then or at the next acquisition along the cycle,
// once in all. Those that pass only under that rule are in
// TestDifferentialRWOrder; ReadOnlySharing and ReadCycleOneLockWriteLocked,
// which the rule must keep silent, are in TestDifferentialGoDeadlockRW.

// TestDifferentialGoDeadlockRW runs the read-write scenarios that hold
// whatever rule Order mode applies to read acquisitions.
func TestDifferentialGoDeadlockRW(t *testing.T) { runDifferentials(t, rwDifferentials) }

// TestDifferentialRWOrder runs the [read rule] inversions: each is
// reported only if Order mode orders read acquisitions (see above).
func TestDifferentialRWOrder(t *testing.T) { runDifferentials(t, rwOrderDifferentials) }

var rwDifferentials = []differential{
	{
		name: "RWNoDeadlocks", origin: "deadlock_test.go TestNoDeadlocks",
		theirs: noDeadlocks(goDeadlockKit), ours: noDeadlocks(locksmithRWKit), wantTheirs: 0, wantOurs: 0,
	},
	{
		name: "RWTryLockNoDeadlocks", origin: "trylock_test.go TestTryLockNoDeadlocks",
		theirs: tryLockNoDeadlocks(goDeadlockKit), ours: tryLockNoDeadlocks(locksmithRWKit), wantTheirs: 0, wantOurs: 0,
	},
	{
		// A TryLock cannot block, so holding a while trying b is no
		// a -> b dependency, and b then R(a) is no inversion; go-deadlock
		// records the TryLocks' order and reports.
		name: "RWTryLockOrder", origin: "trylock_test.go TestTryLockOrder",
		theirs: tryLockOrder(goDeadlockKit, ""), ours: tryLockOrder(locksmithRWKit, "rwmutex"), wantTheirs: 1, wantOurs: 0,
	},
	{
		name: "RWMutex", origin: "deadlock_test.go TestRWMutex", real: true,
		theirs: twoWaiters(goDeadlockKit, false), ours: twoWaiters(locksmithRWKit, false), wantTheirs: 2, wantOurs: 2,
	},
	{
		name: "RWMutexTryLock", origin: "trylock_test.go TestRWMutexTryLock", real: true,
		theirs: twoWaiters(goDeadlockKit, true), ours: twoWaiters(locksmithRWKit, true), wantTheirs: 2, wantOurs: 2,
	},
	{
		name: "RWStarvedRLockMultipleReaders", origin: "deadlock_test.go TestStarvedRLockMultipleReaders", real: true,
		theirs: gdStarved, ours: lsRWStarved, wantTheirs: 2, wantOurs: 2,
	},
	{
		name: "RWManyReadersFewWriters", origin: "deadlock_test.go TestManyReadersFewWriters",
		theirs: manyReaders(goDeadlockKit), ours: manyReaders(locksmithRWKit), wantTheirs: 0, wantOurs: 0,
	},
	{
		name: "RWLockDuplicate", origin: "deadlock_test.go TestLockDuplicate", real: true,
		theirs: gdLockDuplicate(false), ours: lsRWLockDuplicate(false), wantTheirs: 2, wantOurs: 2,
	},
	{
		name: "RWTryLockDuplicate", origin: "trylock_test.go TestTryLockDuplicate", real: true,
		theirs: gdLockDuplicate(true), ours: lsRWLockDuplicate(true), wantTheirs: 2, wantOurs: 2,
	},
	{
		name: "RWMonitorUpgrade", origin: "beyond its suite: read-to-write upgrade", real: true,
		theirs: gdUpgrade, ours: lsRWMonitorUpgrade, wantTheirs: 1, wantOurs: 1,
	},
	{
		// sync.RWMutex lets the second RLock through while no writer
		// waits, so the bug hides until one does; mutex.RWMutex panics on
		// every run.
		name: "RecursiveRLock", origin: "beyond its suite: recursive RLock, no writer", real: true,
		theirs: reentry(goDeadlockKit), ours: lsRecursiveRLock, wantTheirs: 1, wantOurs: 1,
	},
	{
		name: "RecursiveRLockWriterQueued", origin: "beyond its suite: recursive RLock, writer queued", real: true,
		theirs: gdRecursiveRLockWriterQueued, ours: lsRecursiveRLockWriterQueued, wantTheirs: 1, wantOurs: 1,
	},
	{
		// monitor.RWMonitor is reentrant: a reader re-enters, also past a
		// queued writer (the writer waits for it anyway), so neither case
		// is a deadlock on it and it reports nothing.
		name: "RWMonitorReentrantRead", origin: "beyond its suite: RWMonitor re-entrant read, no writer",
		theirs: reentry(goDeadlockKit), ours: lsRWMonitorReentrantRead, wantTheirs: 1, wantOurs: 0,
	},
	{
		name: "RWMonitorReentrantReadWriterQueued", origin: "beyond its suite: ... with a writer queued",
		theirs: gdRecursiveRLockWriterQueued, ours: lsRWMonitorReentrantReadWriterQueued, wantTheirs: 1, wantOurs: 0,
	},
	{
		// G1 holds R(A), G2 R(B), G3 waits for W(A), G4 for W(B), G1
		// asks R(B) behind G4 and G2's R(A) behind G3 closes the cycle.
		// go-deadlock sees it only as a lock-order inversion (and then
		// hangs); we refuse the closing wait in Cycles mode.
		name: "WriterPreferenceCycle", origin: "beyond its suite: a real deadlock through queued writers", real: true,
		theirs: gdWriterPreferenceCycle, ours: lsWriterPreferenceCycle, wantTheirs: 1, wantOurs: 1,
	},
	{
		// [read rule] Readers never block readers: with no writer, R(A)
		// R(B) in one goroutine and R(B) R(A) in another cannot deadlock.
		// go-deadlock treats RLock as Lock and reports.
		name: "ReadOnlySharing", origin: "beyond its suite: read-only cycle, no writer [read rule]",
		theirs: readCycle(goDeadlockKit, noWriter), ours: readCycle(locksmithRWKit, noWriter), wantTheirs: 1, wantOurs: 0,
	},
	{
		// [read rule] A writer on A alone cannot close the cycle: the
		// reader of A that waits (behind the queued writer) holds R(B),
		// and the other reader's R(B) finds no writer on B, so it goes
		// through and the cycle unwinds. Not a deadlock; go-deadlock
		// reports it.
		name: "ReadCycleOneLockWriteLocked", origin: "beyond its suite: read-only cycle, only A write-locked [read rule]",
		theirs: readCycle(goDeadlockKit, writerOnA), ours: readCycle(locksmithRWKit, writerOnA), wantTheirs: 1, wantOurs: 0,
	},
}

var rwOrderDifferentials = []differential{
	{
		// [read rule] W(a) then b; b then R(a): the reader waits for a
		// writer, a real inversion.
		name: "RWLockOrder", origin: "deadlock_test.go TestLockOrder [read rule]", real: true,
		theirs: lockOrder(goDeadlockKit, ""), ours: lockOrder(locksmithRWKit, "rwmutex"), wantTheirs: 1, wantOurs: 1,
	},
	{
		// [read rule] R(a) then b; b then W(a): the writer waits for the
		// reader.
		name: "RWLockOrderReadFirst", origin: "beyond its suite: R(a) b, then b W(a) [read rule]", real: true,
		theirs: lockOrderReadFirst(goDeadlockKit), ours: lockOrderReadFirst(locksmithRWKit), wantTheirs: 1, wantOurs: 1,
	},
	{
		// [read rule] W(A) R(B) and W(B) R(A): each reader waits for the
		// other goroutine's writer.
		name: "TwoRWMutexInversion", origin: "beyond its suite: W(A) R(B), then W(B) R(A) [read rule]", real: true,
		theirs: twoRWInversion(goDeadlockKit), ours: twoRWInversion(locksmithRWKit), wantTheirs: 1, wantOurs: 1,
	},
	{
		// [read rule] A read-only cycle through two locks that are both
		// write-locked elsewhere: writers queued on A and on B between
		// the readers close a real deadlock (the writer-preference cycle
		// of WriterPreferenceCycle).
		name: "ReadCycleWriteLockedBefore", origin: "beyond its suite: read cycle, A and B write-locked first [read rule]", real: true,
		theirs: readCycle(goDeadlockKit, writersBefore), ours: readCycle(locksmithRWKit, writersBefore), wantTheirs: 1, wantOurs: 1,
	},
	{
		// [read rule] The same, B write-locked only after the cycle
		// formed: reported then or at the next acquisition along the
		// cycle (here, R(A) R(B) again), once; go-deadlock reports every
		// inverted acquisition.
		name: "ReadCycleWriteLockedAfter", origin: "beyond its suite: read cycle, B write-locked last [read rule]", real: true,
		theirs: readCycle(goDeadlockKit, lastWriterAfter), ours: readCycle(locksmithRWKit, lastWriterAfter), wantTheirs: -1, wantOurs: 1,
	},
}

// rwLock is what the scenarios need of both read-write locks.
type rwLock interface {
	sync.Locker
	RLock()
	RUnlock()
	TryLock() bool
	TryRLock() bool
}

// namedRW returns a mutex.RWMutex or a monitor.RWMonitor, named for
// reports.
func namedRW(kind, name string) rwLock { return detecttest.Named(kind, name).(rwLock) }

// misuse reports whether v is a panic value matching sentinel whose
// message contains what.
func misuse(t *testing.T, v any, sentinel error, what string) bool {
	t.Helper()
	err, ok := v.(error)
	if !ok || !errors.Is(err, sentinel) {
		t.Errorf("want a panic matching %v, got %#v", sentinel, v)
		return false
	}
	assert.Contains(t, err.Error(), what)
	return true
}

// --- go-deadlock's side, beyond its suite -------------------------------

// gdUpgrade: RLock then Lock by one goroutine; reported, after which the
// Lock blocks until the test's RUnlock.
func gdUpgrade(t *testing.T) int {
	h := useGoDeadlock(t, 0, true)
	var a deadlock.RWMutex
	w := testutil.Spawn(func() {
		a.RLock()
		a.Lock() // reported; blocks until the test's RUnlock
		a.Unlock()
	})
	h.waitHits(t, 1)
	a.RUnlock()
	require.Nil(t, w.Wait(t))
	return h.count()
}

// gdRecursiveRLockWriterQueued: a reader holds a, a writer queues, the
// reader's second RLock is reported and then waits behind the writer,
// which waits for the reader: the deadlock. The test releases the first
// read hold on the reader's behalf (sync's rules allow it).
func gdRecursiveRLockWriterQueued(t *testing.T) int {
	h := useGoDeadlock(t, 0, true)
	var a deadlock.RWMutex
	held, goOn := make(chan struct{}), make(chan struct{})
	reader := testutil.Spawn(func() {
		a.RLock()
		close(held)
		<-goOn
		a.RLock() // reported; waits behind the writer
		a.RUnlock()
	})
	testutil.Await(t, held, "first read hold")
	writer := testutil.Spawn(func() {
		a.Lock()
		a.Unlock()
	})
	testutil.WaitState(t, writer.ID(t), "sync.(*RWMutex).Lock")
	close(goOn)
	h.waitHits(t, 1)
	testutil.WaitState(t, reader.ID(t), "sync.(*RWMutex).RLock")
	a.RUnlock()
	require.Nil(t, writer.Wait(t))
	require.Nil(t, reader.Wait(t))
	return h.count()
}

// gdWriterPreferenceCycle: go-deadlock sees the R(A) R(B) / R(B) R(A)
// order and reports it when G2 asks for A; the goroutines then hang, and
// the test frees them by releasing G1's read hold of A.
func gdWriterPreferenceCycle(t *testing.T) int {
	h := useGoDeadlock(t, 0, true)
	var a, b deadlock.RWMutex
	heldA, heldB := make(chan struct{}), make(chan struct{})
	goOn1, goOn2 := make(chan struct{}), make(chan struct{})
	g1 := testutil.Spawn(func() {
		a.RLock() // released by the test
		close(heldA)
		<-goOn1
		b.RLock() // behind g4
		b.RUnlock()
	})
	g2 := testutil.Spawn(func() {
		b.RLock()
		close(heldB)
		<-goOn2
		a.RLock() // behind g3: reported as an inversion
		a.RUnlock()
		b.RUnlock()
	})
	testutil.Await(t, heldA, "G1's read hold")
	testutil.Await(t, heldB, "G2's read hold")
	g3 := testutil.Spawn(func() { a.Lock(); a.Unlock() })
	testutil.WaitState(t, g3.ID(t), "sync.(*RWMutex).Lock")
	g4 := testutil.Spawn(func() { b.Lock(); b.Unlock() })
	testutil.WaitState(t, g4.ID(t), "sync.(*RWMutex).Lock")
	close(goOn1)
	testutil.WaitState(t, g1.ID(t), "sync.(*RWMutex).RLock")
	close(goOn2)
	testutil.WaitState(t, g2.ID(t), "sync.(*RWMutex).RLock")
	got := h.count() // go-deadlock checks before blocking: final
	a.RUnlock()
	for _, p := range []*testutil.Proc{g1, g2, g3, g4} {
		require.Nil(t, p.Wait(t))
	}
	return got
}

// --- locksmith's side ---------------------------------------------------

// checkRWWaitReports: the writer's report names the read holder, the
// reader's says it waits for reading behind the writer.
func checkRWWaitReports(t *testing.T, rec *detecttest.Recorder, holder, writer, reader int64) {
	t.Helper()
	for _, r := range rec.All() {
		require.Equal(t, detect.WaitTimeout, r.Kind, "%s", r)
		require.Len(t, r.Steps, 2, "%s", r)
		switch r.Steps[0].Goroutine {
		case writer:
			assert.False(t, r.Steps[0].WaitsForReading, "%s", r)
			assert.Equal(t, holder, r.Steps[1].Goroutine, "%s", r)
			assert.True(t, r.Steps[1].HoldsForReading, "%s", r)
			_, ok := detecttest.OwnFrame(r.Steps[1].Stack, ownPrefix)
			assert.True(t, ok, "the holder's stack")
		case reader:
			assert.True(t, r.Steps[0].WaitsForReading, "%s", r)
			assert.Equal(t, writer, r.Steps[1].Goroutine, "%s", r)
		default:
			t.Errorf("report about goroutine %d:\n%s", r.Steps[0].Goroutine, r)
		}
	}
}

// lsRWStarved: the first reader's record must survive other holds taken
// and dropped (go-deadlock's bug was a second reader's RUnlock erasing
// the first reader's record): its own re-entry, a second reader's
// RLock/RUnlock, a failed TryLock.
func lsRWStarved(t *testing.T) int {
	k := locksmithRWKit
	rep := k.configure(t, 20*time.Millisecond, true)
	a := k.rw("rwmonitor", "a")
	a.RLock()
	a.RLock()
	a.RUnlock()
	testutil.OnOtherOK(t, func() {
		a.RLock()
		a.RUnlock()
	})
	testutil.OnOtherOK(t, func() { assert.False(t, a.TryLock()) })
	return writerAndReaderWait(t, k, rep, a)
}

// lsRWLockDuplicate: the upgrade (RLock or TryRLock, then Lock) and a
// recursive write Lock of an RWMutex panic at once with ErrRecursiveLock,
// each naming its case, and leave the lock held as it was.
func lsRWLockDuplicate(try bool) func(t *testing.T) int {
	return func(t *testing.T) int {
		rec := lsConfigure(t, 0)
		var caught atomic.Int32
		var a, b mutex.RWMutex
		w1 := testutil.Spawn(func() {
			take(try, a.RLock, a.TryRLock, "TryRLock")
			if misuse(t, testutil.Catch(a.Lock), mutex.ErrRecursiveLock, "read-to-write upgrade") {
				caught.Add(1)
			}
			a.RUnlock()
		})
		w2 := testutil.Spawn(func() {
			take(try, b.Lock, b.TryLock, "TryLock")
			if misuse(t, testutil.Catch(b.Lock), mutex.ErrRecursiveLock, "recursive locking") {
				caught.Add(1)
			}
			b.Unlock()
		})
		require.Nil(t, w1.Wait(t))
		require.Nil(t, w2.Wait(t))
		assert.False(t, a.Locked())
		assert.False(t, b.Locked())
		return int(caught.Load()) + len(rec.All())
	}
}

// lsRWMonitorUpgrade: Lock by a goroutine holding only read locks of an
// RWMonitor panics with ErrUpgrade instead of waiting for itself.
func lsRWMonitorUpgrade(t *testing.T) int {
	rec := lsConfigure(t, 0)
	var a monitor.RWMonitor
	var caught int
	testutil.OnOtherOK(t, func() {
		a.RLock()
		if misuse(t, testutil.Catch(a.Lock), monitor.ErrUpgrade, "read-to-write upgrade") {
			caught++
		}
		assert.Equal(t, 1, a.ReadHoldCount(), "the read hold is kept")
		a.RUnlock()
	})
	return caught + len(rec.All())
}

func lsRecursiveRLock(t *testing.T) int {
	rec := lsConfigure(t, 0)
	var a mutex.RWMutex
	var caught int
	testutil.OnOtherOK(t, func() {
		a.RLock()
		if misuse(t, testutil.Catch(a.RLock), mutex.ErrRecursiveLock, "recursive read locking") {
			caught++
		}
		assert.Equal(t, 1, a.Readers())
		a.RUnlock()
	})
	return caught + len(rec.All())
}

func lsRecursiveRLockWriterQueued(t *testing.T) int {
	rec := lsConfigure(t, 0)
	a := namedRW("rwmutex", "a").(*mutex.RWMutex)
	held, goOn := make(chan struct{}), make(chan struct{})
	var caught int
	reader := testutil.Spawn(func() {
		a.RLock()
		defer a.RUnlock()
		close(held)
		<-goOn
		if misuse(t, testutil.Catch(a.RLock), mutex.ErrRecursiveLock, "recursive read locking") {
			caught++
		}
	})
	testutil.Await(t, held, "first read hold")
	writer := testutil.Spawn(func() {
		a.Lock()
		a.Unlock()
	})
	detecttest.WaitParked(t, a, writer.ID(t))
	close(goOn)
	require.Nil(t, reader.Wait(t))
	require.Nil(t, writer.Wait(t))
	return caught + len(rec.All())
}

func lsRWMonitorReentrantRead(t *testing.T) int {
	rec := lsConfigure(t, 0)
	var a monitor.RWMonitor
	testutil.OnOtherOK(t, func() {
		a.RLock()
		a.RLock()
		assert.Equal(t, 2, a.ReadHoldCount())
		a.RUnlock()
		a.RUnlock()
	})
	return len(rec.All())
}

func lsRWMonitorReentrantReadWriterQueued(t *testing.T) int {
	rec := lsConfigure(t, 0)
	a := namedRW("rwmonitor", "a").(*monitor.RWMonitor)
	held, goOn := make(chan struct{}), make(chan struct{})
	reader := testutil.Spawn(func() {
		a.RLock()
		defer a.RUnlock()
		close(held)
		<-goOn
		a.RLock() // passes the queued writer
		assert.Equal(t, 2, a.ReadHoldCount())
		a.RUnlock()
	})
	testutil.Await(t, held, "first read hold")
	writer := testutil.Spawn(func() {
		a.Lock()
		a.Unlock()
	})
	detecttest.WaitParked(t, a, writer.ID(t))
	close(goOn)
	require.Nil(t, reader.Wait(t))
	require.Nil(t, writer.Wait(t))
	return len(rec.All())
}

// lsWriterPreferenceCycle runs in Cycles mode: the wait that closes the
// cycle is refused at once with a *detect.DeadlockError, whose deferred
// RUnlock frees the others.
func lsWriterPreferenceCycle(t *testing.T) int {
	rec := detecttest.Configure(t, detect.WithMode(detect.Cycles))
	a, b := namedRW("rwmutex", "A"), namedRW("rwmonitor", "B")
	heldA, heldB := make(chan struct{}), make(chan struct{})
	goOn1, goOn2 := make(chan struct{}), make(chan struct{})
	g1 := testutil.Spawn(func() {
		a.RLock()
		defer a.RUnlock()
		close(heldA)
		<-goOn1
		b.RLock() // behind g4
		b.RUnlock()
	})
	g2 := testutil.Spawn(func() {
		b.RLock()
		defer b.RUnlock()
		close(heldB)
		<-goOn2
		a.RLock() // behind g3: closes the cycle
		a.RUnlock()
	})
	testutil.Await(t, heldA, "G1's read hold")
	testutil.Await(t, heldB, "G2's read hold")
	g3 := testutil.Spawn(func() { a.Lock(); a.Unlock() })
	detecttest.WaitParked(t, a, g3.ID(t))
	g4 := testutil.Spawn(func() { b.Lock(); b.Unlock() })
	detecttest.WaitParked(t, b, g4.ID(t))
	close(goOn1)
	detecttest.WaitParked(t, b, g1.ID(t))
	close(goOn2)
	de := detecttest.DeadlockError(t, g2.Wait(t))
	assert.Len(t, de.Report.Steps, 4, "G2 -> G3 -> G1 -> G4:\n%s", de)
	for _, p := range []*testutil.Proc{g1, g3, g4} {
		require.Nil(t, p.Wait(t))
	}
	assert.Len(t, rec.All(detect.Deadlock), len(rec.All()))
	return len(rec.All())
}
