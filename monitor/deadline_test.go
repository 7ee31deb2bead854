package monitor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
)

// TestMonitorDeadlineWaitMisuse: each predicate and deadline wait on the
// implicit condition, made by a goroutine that does not hold the monitor,
// panics with ErrNotOwner, also when its condition already holds, and
// leaves the monitor with its holder.
func TestMonitorDeadlineWaitMisuse(t *testing.T) {
	yes := func() bool { return true }
	no := func() bool { return false }
	var nilCtx context.Context
	for name, call := range map[string]func(m *monitor.Monitor){
		"WaitUntil":        func(m *monitor.Monitor) { m.WaitUntil(yes) },
		"WaitWhile":        func(m *monitor.Monitor) { m.WaitWhile(no) },
		"WaitDeadline":     func(m *monitor.Monitor) { m.WaitDeadline(time.Now().Add(-time.Hour)) },
		"WaitUntilTimeout": func(m *monitor.Monitor) { m.WaitUntilTimeout(time.Hour, yes) },
		"WaitWhileTimeout": func(m *monitor.Monitor) { m.WaitWhileTimeout(0, yes) },
		"WaitUntilContext": func(m *monitor.Monitor) { _ = m.WaitUntilContext(context.Background(), yes) },
		"WaitWhileContext": func(m *monitor.Monitor) { _ = m.WaitWhileContext(nilCtx, no) },
	} {
		t.Run(name, func(t *testing.T) {
			var m monitor.Monitor
			err, me := testutil.MisusePanic(t, false, func() { call(&m) })
			assert.ErrorIs(t, err, monitor.ErrNotOwner)
			assert.Contains(t, err.Error(), fmt.Sprintf("monitor: wait of unlocked monitor (by goroutine %d)", me))

			m.Lock()
			m.Lock()
			err, _ = testutil.MisusePanic(t, true, func() { call(&m) })
			assert.ErrorIs(t, err, monitor.ErrNotOwner)
			assert.Equal(t, 2, m.HoldCount(), "the holder keeps its holds")
			m.Unlock()
			m.Unlock()
			assert.False(t, m.Locked())
		})
	}
}

// TestMonitorWaitUntilNotified: WaitUntilTimeout returns true once a
// Notify follows the condition coming true, with the hold count restored.
func TestMonitorWaitUntilNotified(t *testing.T) {
	var m monitor.Monitor
	ready := false // guarded by m
	res := make(chan bool, 1)
	go func() {
		m.Lock()
		m.Lock()
		ok := m.WaitUntilTimeout(testutil.Liveness, func() bool { return ready })
		res <- ok && m.HoldCount() == 2
		m.Unlock()
		m.Unlock()
	}()
	testutil.WaitFor(t, "the waiter in its wait", func() bool {
		if !m.TryLock() {
			return false
		}
		defer m.Unlock()
		return monitor.ImplicitWaiters(&m) == 1
	})
	m.Lock()
	ready = true
	m.Notify()
	m.Unlock()
	assert.True(t, testutil.Await(t, res, "waiter"), "notified, with two holds")
}
