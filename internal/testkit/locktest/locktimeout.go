// Package locktest holds the test suites that package mutex and package
// monitor share where their contracts are the same: TryLock,
// LockTimeout, LockContext and the assembly fast paths of Mutex and
// Monitor (each package's test describes its lock as a Lock and runs the
// suite), and RWMutex and RWMonitor shared across testing/synctest
// bubbles (RWBubbleLock).
package locktest

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// TimedLock is the method set that mutex.Mutex and monitor.Monitor share.
type TimedLock interface {
	sync.Locker
	TryLock() bool
	LockTimeout(time.Duration) bool
	LockContext(context.Context) error
	Locked() bool
	Owned() bool
}

// Lock describes a TimedLock for the suites.
type Lock struct {
	Name      string // "mutex", "monitor": in messages
	Reentrant bool   // re-entry by the holder counts a hold (Monitor)
	New       func() TimedLock
	QueueLen  func(TimedLock) int // goroutines parked in its queue
	// Holds returns the caller's hold count: 0 or 1 for a lock that is
	// not reentrant.
	Holds func(TimedLock) int
}

// depth is how often the suites lock a held lock: twice if it re-enters,
// so that "the last Unlock" differs from "an Unlock".
func (c Lock) depth() int {
	if c.Reentrant {
		return 2
	}
	return 1
}

// timedResult is what a goroutine saw after LockTimeout returned.
type timedResult struct {
	ok    bool
	holds int
}

// lockTimeoutOn runs m.LockTimeout(d) on a new goroutine, which unlocks m
// if it got it, and returns the channel that delivers what it saw.
func (c Lock) lockTimeoutOn(m TimedLock, d time.Duration) <-chan timedResult {
	res := make(chan timedResult, 1)
	go func() {
		ok := m.LockTimeout(d)
		r := timedResult{ok, c.Holds(m)}
		if ok && r.holds > 0 {
			m.Unlock()
		}
		res <- r
	}()
	return res
}

// LockTimeout checks LockTimeout's contract on a lock held by another
// goroutine or free: it waits for the last Unlock, at most d; d <= 0 is
// TryLock; a timed-out call leaves the holder's holds and the queue as
// they were; of two calls that would close a deadlock cycle, one returns
// false at once and the detector reports the cycle.
func LockTimeout(t *testing.T, c Lock) {
	t.Run("free", func(t *testing.T) {
		m := c.New()
		require.True(t, m.LockTimeout(time.Hour))
		assert.Equal(t, 1, c.Holds(m))
		m.Unlock()
		assert.False(t, m.Locked())
	})

	for _, d := range []time.Duration{0, -time.Second} {
		t.Run("d<=0 is TryLock/"+d.String(), func(t *testing.T) {
			m := c.New()
			require.True(t, m.LockTimeout(d), "free %s", c.Name)
			assert.Equal(t, 1, c.Holds(m))
			r := testutil.Await(t, c.lockTimeoutOn(m, d), "LockTimeout on a held "+c.Name)
			assert.Equal(t, timedResult{false, 0}, r, "does not wait for a held %s", c.Name)
			assert.Zero(t, c.QueueLen(m), "a zero wait never queues")
			m.Unlock()
			r = testutil.Await(t, c.lockTimeoutOn(m, d), "LockTimeout on a free "+c.Name)
			assert.Equal(t, timedResult{true, 1}, r)
		})
	}

	t.Run("waits for the last Unlock", func(t *testing.T) {
		m := c.New()
		for range c.depth() {
			m.Lock()
		}
		res := c.lockTimeoutOn(m, testutil.Liveness)
		testutil.WaitFor(t, "LockTimeout queued", func() bool { return c.QueueLen(m) == 1 })
		for range c.depth() - 1 {
			m.Unlock()
			assert.Equal(t, 1, c.QueueLen(m), "still queued while a hold remains")
		}
		m.Unlock()
		assert.Equal(t, timedResult{true, 1}, testutil.Await(t, res, "LockTimeout"))
		assert.False(t, m.Locked())
	})

	t.Run("times out while queued", func(t *testing.T) {
		m := c.New()
		for range c.depth() {
			m.Lock()
		}
		// The timeout is what is under test, not a synchronization: the
		// lock stays held until LockTimeout has returned.
		start := time.Now()
		r := testutil.Await(t, c.lockTimeoutOn(m, time.Millisecond), "LockTimeout")
		assert.GreaterOrEqual(t, time.Since(start), time.Millisecond, "returned before its time")
		assert.Equal(t, timedResult{false, 0}, r)
		assert.Equal(t, c.depth(), c.Holds(m), "a timed-out LockTimeout changed the holder's holds")
		assert.Zero(t, c.QueueLen(m), "a timed-out LockTimeout left a queue entry")
		for range c.depth() {
			m.Unlock()
		}
		require.True(t, m.TryLock(), "%s usable after the timeout", c.Name)
		m.Unlock()
		assert.False(t, m.Locked())
	})

	// Waiting for a lock whose holder waits for one the caller holds would
	// close a cycle: whichever of the two LockTimeouts closes it returns
	// false at once, without waiting for its (liveness-long) timeout, and
	// the detector reports the cycle.
	t.Run("would close a deadlock cycle", func(t *testing.T) {
		reports := make(chan *detect.Report, 2)
		defer detect.Configure(detect.WithMode(detect.Cycles), detect.WithWaitTimeout(0),
			detect.WithReporter(func(r *detect.Report) { reports <- r }))()
		a, b := c.New(), c.New()
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
		testutil.WaitFor(t, "the other goroutine queued on a", func() bool { return c.QueueLen(a) == 1 })
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

// LockTimeoutRacesUnlock lets a queued LockTimeout's timer fire about when
// the holder unlocks, with a second goroutine queued behind in Lock.
// Whatever wins, LockTimeout's answer matches what it holds, a wakeup that
// reached a timed-out waiter is handed on to the second waiter, and the
// lock ends free.
func LockTimeoutRacesUnlock(t *testing.T, c Lock) {
	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	var won, lost int
	for i := range rounds {
		m := c.New()
		m.Lock()
		res := c.lockTimeoutOn(m, time.Duration(i%20)*5*time.Microsecond+time.Microsecond)
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
		if r.ok {
			require.Equal(t, 1, r.holds, "round %d: LockTimeout returned true", i)
			won++
		} else {
			require.Zero(t, r.holds, "round %d: LockTimeout returned false", i)
			lost++
		}
		require.True(t, testutil.Await(t, second, "the waiter queued in Lock"), "round %d", i)
		testutil.WaitFor(t, c.Name+" free", func() bool { return !m.Locked() })
		require.Zero(t, c.QueueLen(m), "round %d", i)
	}
	t.Logf("LockTimeout got the %s in %d rounds and timed out in %d", c.Name, won, lost)
}

// LockTimeoutAllocs: uncontended (and on re-entry), LockTimeout allocates
// nothing. Contended, it allocates what Lock's slow path does (the waiter
// and its channel) plus one timer, made only when the goroutine is about
// to park. Detection is off so that the count is the lock's own: the cycle
// check before parking allocates on its own account.
func LockTimeoutAllocs(t *testing.T, c Lock) {
	defer detect.Configure(detect.WithMode(detect.Off))()
	m := c.New()
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
	if c.Reentrant {
		m.Lock()
		assert.Zero(t, testing.AllocsPerRun(100, func() {
			if m.LockTimeout(time.Second) {
				m.Unlock()
			}
		}), "re-entry")
		m.Unlock()
	}

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
	// 2ms: long enough that the call parks (makes its timer) even when a
	// loaded machine stretches the spin before parking; 50 runs take 0.1s.
	got := testing.AllocsPerRun(50, func() {
		if m.LockTimeout(2 * time.Millisecond) {
			t.Errorf("LockTimeout got a %s held by another goroutine", c.Name)
		}
	})
	close(release)
	testutil.Await(t, done, "the holder's Unlock")
	const waiterAndChannel = 2
	t.Logf("a LockTimeout that parks and times out: %.1f allocations; a timer: %.1f", got, timer)
	assert.LessOrEqual(t, got, waiterAndChannel+timer, "more than the waiter and one timer")
	assert.GreaterOrEqual(t, got, timer, "a parked LockTimeout without its timer?")
}
