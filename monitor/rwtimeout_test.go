package monitor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/testkit/locktest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
)

// timedRWMonitor is an RWMonitor's write side for the LockTimeout suites
// that Mutex and Monitor run.
var timedRWMonitor = locktest.Lock{
	Name:      "rwmonitor",
	Reentrant: true,
	New:       func() locktest.TimedLock { return new(monitor.RWMonitor) },
	QueueLen: func(l locktest.TimedLock) int {
		w, _ := monitor.RWQueues(l.(*monitor.RWMonitor))
		return w
	},
	Holds: func(l locktest.TimedLock) int { return l.(*monitor.RWMonitor).WriteHoldCount() },
}

var timedRWMonitorRW = locktest.RWLock{
	Name: "rwmonitor",
	New:  func() locktest.TimedRWLock { return new(monitor.RWMonitor) },
	Queues: func(l locktest.TimedRWLock) (int, int) {
		return monitor.RWQueues(l.(*monitor.RWMonitor))
	},
	Draining: func(l locktest.TimedRWLock) bool { return monitor.RWDraining(l.(*monitor.RWMonitor)) },
}

func TestRWMonitorLockTimeout(t *testing.T) { locktest.LockTimeout(t, timedRWMonitor) }
func TestRWMonitorLockTimeoutRacesUnlock(t *testing.T) {
	locktest.LockTimeoutRacesUnlock(t, timedRWMonitor)
}
func TestRWMonitorLockTimeoutAllocs(t *testing.T)  { locktest.LockTimeoutAllocs(t, timedRWMonitor) }
func TestRWMonitorRLockTimeout(t *testing.T)       { locktest.RLockTimeout(t, timedRWMonitorRW) }
func TestRWMonitorRLockTimeoutAllocs(t *testing.T) { locktest.RLockTimeoutAllocs(t, timedRWMonitorRW) }
func TestRWMonitorTimeoutCycles(t *testing.T)      { locktest.RWTimeoutCycles(t, timedRWMonitorRW) }

// LockTimeout by a goroutine that holds only read locks would wait for
// itself: it panics with ErrUpgrade whatever the timeout, and the reader
// keeps its holds.
func TestRWMonitorLockTimeoutUpgrade(t *testing.T) {
	for _, d := range []time.Duration{time.Hour, 0, -1} {
		var rw monitor.RWMonitor
		rw.RLock()
		rw.RLock()
		err := testutil.MustPanicErr(t, func() { rw.LockTimeout(d) })
		assert.ErrorIs(t, err, monitor.ErrUpgrade, "LockTimeout(%v)", d)
		assert.Contains(t, err.Error(), "monitor: deadlock; read-to-write upgrade", "LockTimeout(%v)", d)
		assert.Equal(t, 2, rw.ReadHoldCount(), "LockTimeout(%v): the reader's holds", d)
		assert.False(t, rw.Locked(), "LockTimeout(%v)", d)
		rw.RUnlock()
		rw.RUnlock()
		require.True(t, rw.TryLock(), "LockTimeout(%v): rw usable", d)
		rw.Unlock()
	}
}

// Re-entry cannot block: the writer's LockTimeout and RLockTimeout, and a
// reader's RLockTimeout, succeed at once whatever the timeout, also past
// a writer queued behind the reader, and add one hold each.
func TestRWMonitorTimeoutReentry(t *testing.T) {
	for _, d := range []time.Duration{time.Hour, 0, -1} {
		var rw monitor.RWMonitor
		rw.Lock()
		require.True(t, rw.LockTimeout(d), "writer's LockTimeout(%v)", d)
		assert.Equal(t, 2, rw.WriteHoldCount())
		require.True(t, rw.RLockTimeout(d), "writer's RLockTimeout(%v)", d)
		assert.Equal(t, 1, rw.ReadHoldCount())
		rw.RUnlock()
		rw.Unlock()
		rw.Unlock()
		assert.False(t, rw.Locked())

		rw.RLock()
		wres := make(chan bool, 1)
		go func() {
			rw.Lock()
			wres <- rw.Owned()
			rw.Unlock()
		}()
		testutil.WaitFor(t, "the writer waiting for the reader", func() bool { return monitor.RWDraining(&rw) })
		require.True(t, rw.RLockTimeout(d), "reader's RLockTimeout(%v) past a waiting writer", d)
		require.True(t, rw.RLockTimeout(d), "reader's second RLockTimeout(%v)", d)
		assert.Equal(t, 3, rw.ReadHoldCount())
		assert.True(t, monitor.RWDraining(&rw), "the writer still waits")
		rw.RUnlock()
		rw.RUnlock()
		rw.RUnlock()
		assert.True(t, testutil.Await(t, wres, "the writer"))
		testutil.WaitFor(t, "rw free", func() bool { return !rw.Locked() })
	}
}

// Re-entry by the timed calls allocates nothing.
func TestRWMonitorTimeoutReentryAllocs(t *testing.T) {
	var rw monitor.RWMonitor
	rw.RLock()
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if rw.RLockTimeout(time.Second) {
			rw.RUnlock()
		}
	}), "reader's re-entry")
	rw.RUnlock()
	rw.Lock()
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if rw.RLockTimeout(time.Second) {
			rw.RUnlock()
		}
	}), "writer's read hold")
	rw.Unlock()
}

func TestRWMonitorTimeoutHammer(t *testing.T) {
	iters := 2000
	if testing.Short() {
		iters = 300
	}
	locktest.RWTimeoutHammer(t, timedRWMonitorRW, 6, iters)
}

func TestRWMonitorTimeoutOrder(t *testing.T) { locktest.RWTimeoutOrder(t, timedRWMonitorRW) }
