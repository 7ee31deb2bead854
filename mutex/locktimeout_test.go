package mutex_test

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testutil"
	"github.com/locksmith-go/locksmith/internal/testutil/detecttest"
	"github.com/locksmith-go/locksmith/mutex"
)

// lockTimeoutResult is what a goroutine saw after LockTimeout returned.
type lockTimeoutResult struct {
	ok, owned bool
}

// lockTimeoutOn runs m.LockTimeout(d) on a new goroutine, which unlocks m
// if it got it, and returns the channel that delivers what it saw.
func lockTimeoutOn(m *mutex.Mutex, d time.Duration) <-chan lockTimeoutResult {
	res := make(chan lockTimeoutResult, 1)
	go func() {
		ok := m.LockTimeout(d)
		r := lockTimeoutResult{ok, m.Owned()}
		if ok && r.owned {
			m.Unlock()
		}
		res <- r
	}()
	return res
}

func TestMutexLockTimeout(t *testing.T) {
	t.Run("free", func(t *testing.T) {
		var m mutex.Mutex
		require.True(t, m.LockTimeout(time.Hour))
		assert.True(t, m.Owned())
		m.Unlock()
		assert.False(t, m.Locked())
	})

	for _, d := range []time.Duration{0, -time.Second} {
		t.Run("d<=0 is TryLock/"+d.String(), func(t *testing.T) {
			var m mutex.Mutex
			require.True(t, m.LockTimeout(d), "free mutex")
			assert.True(t, m.Owned())
			r := testutil.Await(t, lockTimeoutOn(&m, d), "LockTimeout on a held mutex")
			assert.Equal(t, lockTimeoutResult{false, false}, r, "does not wait for a held mutex")
			assert.Zero(t, mutex.QueueLen(&m), "a zero wait never queues")
			m.Unlock()
		})
	}

	t.Run("waits for Unlock", func(t *testing.T) {
		var m mutex.Mutex
		m.Lock()
		res := lockTimeoutOn(&m, testutil.Liveness)
		testutil.WaitFor(t, "LockTimeout queued", func() bool { return mutex.QueueLen(&m) == 1 })
		m.Unlock()
		assert.Equal(t, lockTimeoutResult{true, true}, testutil.Await(t, res, "LockTimeout"))
		assert.False(t, m.Locked())
	})

	t.Run("times out while queued", func(t *testing.T) {
		var m mutex.Mutex
		m.Lock()
		// The timeout is what is under test, not a synchronization: the
		// mutex stays held until LockTimeout has returned.
		start := time.Now()
		r := testutil.Await(t, lockTimeoutOn(&m, time.Millisecond), "LockTimeout")
		assert.GreaterOrEqual(t, time.Since(start), time.Millisecond, "returned before its time")
		assert.Equal(t, lockTimeoutResult{false, false}, r)
		assert.True(t, m.Owned(), "a timed-out LockTimeout changed the holder")
		assert.Zero(t, mutex.QueueLen(&m), "a timed-out LockTimeout left a queue entry")
		m.Unlock()
		require.True(t, m.TryLock(), "mutex usable after the timeout")
		m.Unlock()
	})

	// Waiting for a lock whose holder waits for one the caller holds would
	// close a cycle: whichever of the two LockTimeouts closes it returns
	// false at once, without waiting for its (liveness-long) timeout, and
	// the detector reports the cycle.
	t.Run("would close a deadlock cycle", func(t *testing.T) {
		reports := make(chan *detect.Report, 2)
		defer detect.Configure(detect.WithMode(detect.Cycles), detect.WithWaitTimeout(0),
			detect.WithReporter(func(r *detect.Report) { reports <- r }))()
		var a, b mutex.Mutex
		a.Lock()
		holdsB := make(chan struct{})
		other := make(chan bool, 1)
		go func() {
			b.Lock()
			close(holdsB)
			ok := a.LockTimeout(testutil.Liveness)
			if ok {
				a.Unlock()
			}
			b.Unlock()
			other <- ok
		}()
		testutil.Await(t, holdsB, "the other goroutine holding b")
		testutil.WaitFor(t, "the other goroutine queued on a", func() bool { return mutex.QueueLen(&a) == 1 })
		mine := b.LockTimeout(testutil.Liveness)
		if mine {
			b.Unlock()
		}
		a.Unlock()
		theirs := testutil.Await(t, other, "the other goroutine's LockTimeout")
		assert.NotEqual(t, mine, theirs, "exactly one LockTimeout backs off (mine %v, theirs %v)", mine, theirs)
		r := testutil.Await(t, reports, "the deadlock report")
		assert.Equal(t, detect.Deadlock, r.Kind)
		assert.False(t, a.Locked())
		assert.False(t, b.Locked())
	})
}

// LockTimeout by the holder is recursive locking, whatever the timeout:
// it panics with ErrRecursiveLock and leaves m held by the caller.
func TestMutexLockTimeoutRecursive(t *testing.T) {
	for _, d := range []time.Duration{time.Hour, 0, -1} {
		var m mutex.Mutex
		m.Lock()
		v := testutil.Catch(func() { m.LockTimeout(d) })
		err, ok := v.(error)
		require.Truef(t, ok, "LockTimeout(%v) by the holder: want an error panic, got %#v", d, v)
		assert.ErrorIs(t, err, mutex.ErrRecursiveLock, "LockTimeout(%v)", d)
		assert.Contains(t, err.Error(), "mutex: deadlock; recursive locking")
		assert.True(t, m.Owned(), "LockTimeout(%v): the holder lost m", d)
		m.Unlock()
		assert.False(t, m.Locked())
	}
}

// TestMutexLockTimeoutRacesUnlock lets a queued LockTimeout's timer fire
// about when the holder unlocks, with a second goroutine queued behind in
// Lock. Whatever wins, LockTimeout's answer matches what it holds, a
// wakeup that reached a timed-out waiter is handed on to the second
// waiter, and the mutex ends free.
func TestMutexLockTimeoutRacesUnlock(t *testing.T) {
	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	var won, lost int
	for i := range rounds {
		var m mutex.Mutex
		m.Lock()
		res := lockTimeoutOn(&m, time.Duration(i%20)*5*time.Microsecond+time.Microsecond)
		second := make(chan bool, 1)
		go func() {
			m.Lock()
			second <- m.Owned()
			m.Unlock()
		}()
		if i%3 == 0 {
			runtime.Gosched()
		}
		m.Unlock()
		r := testutil.Await(t, res, "LockTimeout")
		require.Equal(t, r.ok, r.owned, "round %d: LockTimeout returned %v", i, r.ok)
		if r.ok {
			won++
		} else {
			lost++
		}
		require.True(t, testutil.Await(t, second, "the waiter queued in Lock"), "round %d", i)
		testutil.WaitFor(t, "mutex free", func() bool { return !m.Locked() })
		require.Zero(t, mutex.QueueLen(&m), "round %d", i)
	}
	t.Logf("LockTimeout got the mutex in %d rounds and timed out in %d", won, lost)
}

// Uncontended, LockTimeout allocates nothing. Contended, it allocates what
// Lock's slow path does (the waiter and its channel) plus one timer, made
// only when the goroutine is about to park. Detection is off so that the
// count is the lock's own: the cycle check before parking allocates on its
// own account.
func TestMutexLockTimeoutAllocs(t *testing.T) {
	defer detect.Configure(detect.WithMode(detect.Off))()
	var m mutex.Mutex
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if m.LockTimeout(time.Second) {
			m.Unlock()
		}
	}), "uncontended LockTimeout/Unlock")
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if m.LockTimeout(0) {
			m.Unlock()
		}
	}), "LockTimeout(0)/Unlock")

	timer := testing.AllocsPerRun(100, func() { time.NewTimer(time.Hour).Stop() })
	release := make(chan struct{})
	held := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Lock()
		close(held)
		<-release
		m.Unlock()
	}()
	testutil.Await(t, held, "the holder")
	got := testing.AllocsPerRun(50, func() {
		if m.LockTimeout(20 * time.Microsecond) {
			t.Error("LockTimeout got a mutex held by another goroutine")
		}
	})
	close(release)
	testutil.Await(t, done, "the holder's Unlock")
	const waiterAndChannel = 2
	t.Logf("a LockTimeout that parks and times out: %.1f allocations; a timer: %.1f", got, timer)
	assert.LessOrEqual(t, got, waiterAndChannel+timer, "more than the waiter and one timer")
	assert.GreaterOrEqual(t, got, timer, "a parked LockTimeout without its timer?")
}

var errNotOwnedAfterTrue = errors.New("LockTimeout returned true without the lock")

// LockTimeout on a contended mutex keeps mutual exclusion: the hammer in
// every detection mode, half of the acquisitions timed.
func TestMutexLockTimeoutHammer(t *testing.T) {
	iters := 2000
	if testing.Short() {
		iters = 300
	}
	detecttest.ForEachMode(t, func(t *testing.T) {
		hammer(t, 2, 6, iters, func(m *mutex.Mutex, g, i int) {
			if (g+i)%2 == 0 {
				m.Lock()
				return
			}
			for !m.LockTimeout(time.Duration(i%7) * time.Microsecond) {
				runtime.Gosched()
			}
			if !m.Owned() {
				panic(errNotOwnedAfterTrue)
			}
		})
	})
}
