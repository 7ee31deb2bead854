//go:build go1.25

// testing/synctest.Test is Go 1.25; the module supports Go 1.24, whose
// toolchain skips this file.

package monitor_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/monitor"
)

// Goroutines blocked in Lock, LockContext and the implicit condition's Wait
// are durably blocked: synctest.Wait returns while they wait.
func TestSynctestMonitorDurablyBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m monitor.Monitor
		m.Lock()
		m.Lock()

		locked := make(chan int, 1)
		go func() {
			m.Lock()
			locked <- m.HoldCount()
			m.Unlock()
		}()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		lockedCtx := make(chan error, 1)
		go func() {
			err := m.LockContext(ctx)
			if err == nil {
				m.Unlock()
			}
			lockedCtx <- err
		}()
		synctest.Wait()
		assert.Equal(t, 2, monitor.QueueLen(&m), "Lock and LockContext both parked")
		assert.Empty(t, locked)
		assert.Empty(t, lockedCtx)

		// Wait releases both holds; both parked goroutines get the monitor
		// in turn, and Wait returns once we Notify.
		waitDone := make(chan int, 1)
		go func() {
			synctest.Wait() // until the other goroutines are done or parked
			m.Lock()
			m.Notify()
			m.Unlock()
		}()
		m.Wait()
		waitDone <- m.HoldCount()
		assert.Equal(t, 2, <-waitDone)
		assert.Equal(t, 1, <-locked)
		assert.NoError(t, <-lockedCtx)
		m.Unlock()
		m.Unlock()
		assert.False(t, m.Locked())
	})
}

func TestSynctestMonitorWaitIsDurable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m monitor.Monitor
		ready := false // guarded by m
		done := make(chan int, 1)
		go func() {
			m.Lock()
			m.Lock()
			for !ready {
				m.Wait()
			}
			done <- m.HoldCount()
			m.Unlock()
			m.Unlock()
		}()
		synctest.Wait()
		assert.False(t, m.Locked(), "the waiter released every hold")
		assert.Empty(t, done)
		m.Lock()
		ready = true
		m.Notify()
		m.Unlock()
		assert.Equal(t, 2, <-done)
	})
}

// WaitTimeout and WaitContext run on the bubble's fake clock: an hour-long
// timeout that nobody notifies ends at once, an hour later in bubble time.
func TestSynctestMonitorWaitTimeoutFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m monitor.Monitor
		m.Lock()
		m.Lock()
		start := time.Now()
		require.False(t, m.WaitTimeout(time.Hour))
		assert.Equal(t, time.Hour, time.Since(start))
		assert.Equal(t, 2, m.HoldCount())

		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		require.ErrorIs(t, m.WaitContext(ctx), context.DeadlineExceeded)
		assert.Equal(t, 2*time.Hour, time.Since(start))
		assert.Equal(t, 2, m.HoldCount())
		m.Unlock()
		m.Unlock()
	})
}

func TestSynctestMonitorLockContextDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m monitor.Monitor
		m.Lock()
		defer m.Unlock()
		start := time.Now()
		res := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			res <- m.LockContext(ctx)
		}()
		require.ErrorIs(t, <-res, context.DeadlineExceeded)
		assert.Equal(t, time.Hour, time.Since(start))
		assert.Zero(t, monitor.QueueLen(&m))
	})
}
