package monitor_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testutil"
	"github.com/locksmith-go/locksmith/monitor"
)

// lockTimeoutResult is what a goroutine saw after LockTimeout returned.
type lockTimeoutResult struct {
	ok    bool
	holds int
}

// lockTimeoutOn runs m.LockTimeout(d) on a new goroutine, which unlocks m
// if it got it, and returns the channel that delivers what it saw.
func lockTimeoutOn(m *monitor.Monitor, d time.Duration) <-chan lockTimeoutResult {
	res := make(chan lockTimeoutResult, 1)
	go func() {
		ok := m.LockTimeout(d)
		r := lockTimeoutResult{ok, m.HoldCount()}
		if ok && r.holds > 0 {
			m.Unlock()
		}
		res <- r
	}()
	return res
}

func TestMonitorLockTimeout(t *testing.T) {
	t.Run("free", func(t *testing.T) {
		var m monitor.Monitor
		require.True(t, m.LockTimeout(time.Hour))
		assert.Equal(t, 1, m.HoldCount())
		m.Unlock()
		assert.False(t, m.Locked())
	})

	// Re-entry cannot block: it succeeds at once, whatever the timeout,
	// and adds one hold.
	t.Run("owner re-enters", func(t *testing.T) {
		var m monitor.Monitor
		m.Lock()
		for i, d := range []time.Duration{time.Hour, 0, -time.Second} {
			require.True(t, m.LockTimeout(d), "LockTimeout(%v) by the owner", d)
			assert.Equal(t, i+2, m.HoldCount())
		}
		for m.HoldCount() > 0 {
			m.Unlock()
		}
		assert.False(t, m.Locked())
	})

	for _, d := range []time.Duration{0, -time.Second} {
		t.Run("d<=0 is TryLock/"+d.String(), func(t *testing.T) {
			var m monitor.Monitor
			m.Lock()
			r := testutil.Await(t, lockTimeoutOn(&m, d), "LockTimeout on a held monitor")
			assert.Equal(t, lockTimeoutResult{false, 0}, r, "does not wait for a held monitor")
			assert.Zero(t, monitor.QueueLen(&m), "a zero wait never queues")
			m.Unlock()
			r = testutil.Await(t, lockTimeoutOn(&m, d), "LockTimeout on a free monitor")
			assert.Equal(t, lockTimeoutResult{true, 1}, r)
		})
	}

	t.Run("waits for the last Unlock", func(t *testing.T) {
		var m monitor.Monitor
		m.Lock()
		m.Lock()
		res := lockTimeoutOn(&m, testutil.Liveness)
		testutil.WaitFor(t, "LockTimeout queued", func() bool { return monitor.QueueLen(&m) == 1 })
		m.Unlock()
		assert.Equal(t, 1, monitor.QueueLen(&m), "still queued while a hold remains")
		m.Unlock()
		assert.Equal(t, lockTimeoutResult{true, 1}, testutil.Await(t, res, "LockTimeout"))
		assert.False(t, m.Locked())
	})

	t.Run("times out while queued", func(t *testing.T) {
		var m monitor.Monitor
		m.Lock()
		m.Lock()
		// The timeout is what is under test, not a synchronization: the
		// monitor stays held until LockTimeout has returned.
		start := time.Now()
		r := testutil.Await(t, lockTimeoutOn(&m, time.Millisecond), "LockTimeout")
		assert.GreaterOrEqual(t, time.Since(start), time.Millisecond, "returned before its time")
		assert.Equal(t, lockTimeoutResult{false, 0}, r)
		assert.Equal(t, 2, m.HoldCount(), "a timed-out LockTimeout changed the owner's holds")
		assert.Zero(t, monitor.QueueLen(&m), "a timed-out LockTimeout left a queue entry")
		m.Unlock()
		m.Unlock()
		assert.False(t, m.Locked())
	})

	// See the mutex test of the same name: whichever LockTimeout would
	// close the cycle returns false at once and the detector reports it.
	t.Run("would close a deadlock cycle", func(t *testing.T) {
		reports := make(chan *detect.Report, 2)
		defer detect.Configure(detect.WithMode(detect.Cycles), detect.WithWaitTimeout(0),
			detect.WithReporter(func(r *detect.Report) { reports <- r }))()
		var a, b monitor.Monitor
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
		testutil.WaitFor(t, "the other goroutine queued on a", func() bool { return monitor.QueueLen(&a) == 1 })
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

// See TestMutexLockTimeoutRacesUnlock.
func TestMonitorLockTimeoutRacesUnlock(t *testing.T) {
	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	for i := range rounds {
		var m monitor.Monitor
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
		if r.ok {
			require.Equal(t, 1, r.holds, "round %d: LockTimeout returned true", i)
		} else {
			require.Zero(t, r.holds, "round %d: LockTimeout returned false", i)
		}
		require.True(t, testutil.Await(t, second, "the waiter queued in Lock"), "round %d", i)
		testutil.WaitFor(t, "monitor free", func() bool { return !m.Locked() })
		require.Zero(t, monitor.QueueLen(&m), "round %d", i)
	}
}

// See TestMutexLockTimeoutAllocs.
func TestMonitorLockTimeoutAllocs(t *testing.T) {
	defer detect.Configure(detect.WithMode(detect.Off))()
	var m monitor.Monitor
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if m.LockTimeout(time.Second) {
			m.Unlock()
		}
	}), "uncontended LockTimeout/Unlock")
	m.Lock()
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if m.LockTimeout(time.Second) {
			m.Unlock()
		}
	}), "re-entry")
	m.Unlock()

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
			t.Error("LockTimeout got a monitor held by another goroutine")
		}
	})
	close(release)
	testutil.Await(t, done, "the holder's Unlock")
	const waiterAndChannel = 2
	assert.LessOrEqual(t, got, waiterAndChannel+timer, "more than the waiter and one timer")
	assert.GreaterOrEqual(t, got, timer, "a parked LockTimeout without its timer?")
}
