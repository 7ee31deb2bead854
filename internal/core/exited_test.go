package core

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/gid"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// exitHolding runs take(g) on a new goroutine of ID g, which returns
// holding what it took, and returns g once the goroutine has exited.
func exitHolding(t *testing.T, take func(g int64)) int64 {
	t.Helper()
	p := testutil.Spawn(func() { take(gid.Get()) })
	require.Nil(t, p.Wait(t))
	testutil.WaitFor(t, "the holder's exit", func() bool {
		_, _, alive := testutil.GoroutineDump(p.G)
		return !alive
	})
	return p.G
}

// waitFails runs wait on a new goroutine and requires it to fail with the
// exited-holder error.
func waitFails(t *testing.T, wait func(g int64) error) {
	t.Helper()
	var err error
	p := testutil.Spawn(func() { err = wait(gid.Get()) })
	require.Nil(t, p.Wait(t))
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "holder has exited"), "%v", err)
	_, registered := waitingOn(p.G)
	assert.False(t, registered, "the waiter is unregistered")
}

// A wait whose holder has exited fails, in the waiter's goroutine, and
// leaves the lock as it was but for the waiter: off the queue, with its
// flags cleared; still held by the exited goroutine. Two waiters queued
// behind it both fail. A reader behind an exited writer leaves the reader
// queue empty; a writer waiting for an exited reader gives the write lock
// back and stops draining.
func TestExitedHolderLeavesLockConsistent(t *testing.T) {
	if Mode() == ModeOff {
		t.Skip("the check runs in Cycles and Order modes")
	}
	t.Run("lock", func(t *testing.T) {
		var l Lock
		h := exitHolding(t, func(g int64) { l.FastAcquire(g) })
		done := make(chan struct{})
		go func() {
			defer close(done)
			waitFails(t, func(g int64) error { return l.Acquire(g, nil, ClassMutex) })
		}()
		waitFails(t, func(g int64) error { return l.Acquire(g, nil, ClassMutex) })
		testutil.Await(t, done, "the second waiter")
		assert.Zero(t, l.QueueLen())
		assert.Equal(t, h<<ownerShift, l.state.Load(), "held by the exited goroutine, no flag set")
	})
	t.Run("reader", func(t *testing.T) {
		var l RWLock
		h := exitHolding(t, func(g int64) { require.NoError(t, l.Lock(g, nil, ClassRWMutex)) })
		waitFails(t, func(g int64) error { return l.RLockSlow(g, nil, ClassRWMutex) })
		assert.Zero(t, l.QueuedReaders())
		assert.Zero(t, l.rs.Load(), "no reader waiting or draining")
		assert.Equal(t, h, l.Writer())
	})
	t.Run("writer", func(t *testing.T) {
		var l RWLock
		h := exitHolding(t, func(g int64) { require.NoError(t, l.RLockSlow(g, nil, ClassRWMutex)) })
		waitFails(t, func(g int64) error { return l.Lock(g, nil, ClassRWMutex) })
		assert.False(t, l.Draining())
		assert.Zero(t, l.Writer(), "the writer lock is given back")
		assert.Equal(t, []int64{h}, l.ReaderIDs())
		assert.Nil(t, l.drainer.Load())
	})
}

// The check does not fail a wait whose holder runs, however long it holds
// the lock: the holder here releases it only after the check has dumped
// the goroutines twice with the waiter old enough to be looked at.
func TestExitedCheckSparesLiveHolder(t *testing.T) {
	if Mode() == ModeOff {
		t.Skip("the check runs in Cycles and Order modes")
	}
	var dumps atomic.Int32
	hook := func() { dumps.Add(1) }
	testHookExitedDump.Store(&hook)
	defer testHookExitedDump.Store(nil)
	var l Lock
	g := gid.Get()
	require.True(t, l.FastAcquire(g))
	var err error
	w := testutil.Spawn(func() { err = l.Acquire(gid.Get(), nil, ClassMutex) })
	wg := w.ID(t)
	testutil.WaitFor(t, "two checks with the waiter parked", func() bool {
		_, parked := waitingOn(wg)
		if !parked {
			dumps.Store(0)
		}
		return parked && dumps.Load() >= 2
	})
	l.Release(g)
	require.Nil(t, w.Wait(t))
	require.NoError(t, err)
	l.Release(wg)
}

// A holder that gives the lock up and exits between the check's look at
// the waits and its dump is missing from the dump, but no longer holds
// the lock: the check must not fail the waiter, queued still, behind the
// goroutine that took the lock meanwhile (x, alive). The hook makes that
// interleaving: the lock passes from the first holder to x, as if x had
// barged in at its release, and the first holder exits.
func TestExitedCheckRechecksHolder(t *testing.T) {
	if Mode() == ModeOff {
		t.Skip("the check runs in Cycles and Order modes")
	}
	var l Lock
	release := make(chan struct{})
	locked := make(chan int64)
	h := testutil.Spawn(func() {
		g := gid.Get()
		l.FastAcquire(g)
		locked <- g
		<-release
		l.Release(g) // x holds it by then: changes nothing
	})
	hg := <-locked
	xGo := make(chan struct{})
	x := testutil.Spawn(func() {
		<-xGo
		l.Release(gid.Get())
	})
	xg := x.ID(t)
	var err error
	w := testutil.Spawn(func() { err = l.Acquire(gid.Get(), nil, ClassMutex) })
	wg := w.ID(t)
	passed := make(chan struct{})
	var once atomic.Bool
	hook := func() {
		if _, parked := waitingOn(wg); !parked || l.QueueLen() != 1 || !once.CompareAndSwap(false, true) {
			return
		}
		for s := l.state.Load(); !l.state.CompareAndSwap(s, s&flagMask|xg<<ownerShift); s = l.state.Load() {
		}
		close(release)
		h.Wait(t)
		testutil.WaitFor(t, "the first holder's exit", func() bool {
			_, _, alive := testutil.GoroutineDump(hg)
			return !alive
		})
		close(passed)
	}
	testHookExitedDump.Store(&hook)
	defer testHookExitedDump.Store(nil)
	testutil.Await(t, passed, "the hand-over inside the check")
	testHookExitedDump.Store(nil)
	close(xGo) // x releases: the waiter, spared, takes the lock
	require.Nil(t, x.Wait(t))
	require.Nil(t, w.Wait(t))
	require.NoError(t, err, "the waiter takes the lock")
	assert.Equal(t, wg, l.Owner())
	l.Release(wg)
}

// liveIDs reads the goroutine IDs of a dump's headers, and nothing else.
func TestLiveIDs(t *testing.T) {
	dump := "goroutine 7 [running]:\nmain.f()\n\t/x.go:1 +0x1\ncreated by main.g in goroutine 3\n\t/x.go:2 +0x2\n\n" +
		"goroutine 12 [chan receive, synctest bubble 2]:\ngoroutine.F()\n\t/y.go:3 +0x3\n"
	assert.Equal(t, map[int64]bool{7: true, 12: true}, liveIDs([]byte(dump)))
}

// The check dumps at every run up to perPeriod goroutines, and beyond
// spaces its dumps in proportion to their number.
func TestDumpSpacing(t *testing.T) {
	assert.Zero(t, dumpSpacing(1))
	assert.Zero(t, dumpSpacing(perPeriod))
	assert.Equal(t, 5*exitedPeriod, dumpSpacing(5*perPeriod))
	assert.Greater(t, dumpSpacing(perPeriod+1), exitedPeriod)
	assert.False(t, tooSoon(time.Time{}, 10*perPeriod), "no dump yet")
	assert.False(t, tooSoon(time.Now(), perPeriod), "every run dumps")
	assert.True(t, tooSoon(time.Now(), 10*perPeriod))
	assert.False(t, tooSoon(time.Now().Add(-10*exitedPeriod), 10*perPeriod))
}
