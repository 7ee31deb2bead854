package monitor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/testkit/locktest"
	"github.com/locksmith-go/locksmith/monitor"
)

// timedMonitor is a Monitor for the LockTimeout suites that mutex and
// monitor share.
var timedMonitor = locktest.Lock{
	Name:      "monitor",
	Reentrant: true,
	New:       func() locktest.TimedLock { return new(monitor.Monitor) },
	QueueLen:  func(l locktest.TimedLock) int { return monitor.QueueLen(l.(*monitor.Monitor)) },
	Holds:     func(l locktest.TimedLock) int { return l.(*monitor.Monitor).HoldCount() },
}

func TestMonitorLockTimeout(t *testing.T) { locktest.LockTimeout(t, timedMonitor) }
func TestMonitorLockTimeoutRacesUnlock(t *testing.T) {
	locktest.LockTimeoutRacesUnlock(t, timedMonitor)
}
func TestMonitorLockTimeoutAllocs(t *testing.T) { locktest.LockTimeoutAllocs(t, timedMonitor) }

// Re-entry cannot block: it succeeds at once, whatever the timeout, and
// adds one hold.
func TestMonitorLockTimeoutReentry(t *testing.T) {
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
}
