//go:build go1.25

// testing/synctest.Test is Go 1.25; the module supports older Go, whose
// toolchain skips this file. The bubble's fake clock makes every time
// below exact.

package monitor_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locksmith-go/locksmith/monitor"
)

// The predicate waits on the implicit condition keep one deadline across
// Notify wakeups meant for another condition, see a condition that came
// true when the time is up, and restore the hold count however they end.
func TestSynctestMonitorDeadlineWaits(t *testing.T) {
	waits := []struct {
		name string
		wait func(m *monitor.Monitor, d time.Duration, pred func() bool) bool
	}{
		{"WaitUntilTimeout", func(m *monitor.Monitor, d time.Duration, pred func() bool) bool {
			return m.WaitUntilTimeout(d, pred)
		}},
		{"WaitWhileTimeout", func(m *monitor.Monitor, d time.Duration, pred func() bool) bool {
			return m.WaitWhileTimeout(d, func() bool { return !pred() })
		}},
		{"WaitUntilContext", func(m *monitor.Monitor, d time.Duration, pred func() bool) bool {
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			err := m.WaitUntilContext(ctx, pred)
			if err != nil {
				assert.ErrorIs(t, err, context.DeadlineExceeded)
			}
			return err == nil
		}},
		{"WaitWhileContext", func(m *monitor.Monitor, d time.Duration, pred func() bool) bool {
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			err := m.WaitWhileContext(ctx, func() bool { return !pred() })
			if err != nil {
				assert.ErrorIs(t, err, context.DeadlineExceeded)
			}
			return err == nil
		}},
	}
	for _, w := range waits {
		t.Run(w.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var m monitor.Monitor
				ready := false // guarded by m
				done := make(chan struct{})
				go func() {
					defer close(done)
					for i := 0; i < 3; i++ {
						time.Sleep(15 * time.Minute)
						m.Lock()
						m.Notify() // not the condition
						m.Unlock()
					}
				}()
				start := time.Now()
				m.Lock()
				m.Lock()
				m.Lock()
				calls := 0
				assert.False(t, w.wait(&m, time.Hour, func() bool { calls++; return false }))
				assert.Equal(t, time.Hour, time.Since(start), "one deadline, whatever the wakeups")
				assert.Equal(t, 5, calls, "on entry, after three notifies, after the timeout")
				assert.Equal(t, 3, m.HoldCount(), "hold count restored after the timeout")
				<-done

				go func() {
					time.Sleep(10 * time.Minute)
					m.Lock()
					ready = true // and no Notify
					m.Unlock()
				}()
				start = time.Now()
				assert.True(t, w.wait(&m, time.Hour, func() bool { return ready }), "true when the time is up")
				assert.Equal(t, time.Hour, time.Since(start))
				assert.Equal(t, 3, m.HoldCount())

				start = time.Now()
				assert.True(t, w.wait(&m, 0, func() bool { return ready }), "true on entry")
				ready = false
				assert.False(t, w.wait(&m, 0, func() bool { return ready }), "no time left")
				assert.Zero(t, time.Since(start), "neither waits")
				m.Unlock()
				m.Unlock()
				m.Unlock()
			})
		})
	}
}

// WaitDeadline, WaitUntil and WaitWhile on the implicit condition.
func TestSynctestMonitorWaitDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m monitor.Monitor
		start := time.Now()
		m.Lock()
		assert.False(t, m.WaitDeadline(start.Add(-time.Minute)), "a deadline in the past")
		assert.Zero(t, time.Since(start))
		assert.False(t, m.WaitDeadline(start.Add(time.Hour)))
		assert.Equal(t, time.Hour, time.Since(start))

		n := 0 // guarded by m
		go func() {
			for i := 0; i < 2; i++ {
				time.Sleep(time.Minute)
				m.Lock()
				n++
				m.NotifyAll()
				m.Unlock()
			}
		}()
		m.WaitUntil(func() bool { return n == 1 })
		assert.Equal(t, time.Hour+time.Minute, time.Since(start))
		m.WaitWhile(func() bool { return n < 2 })
		assert.Equal(t, time.Hour+2*time.Minute, time.Since(start))
		m.Unlock()
	})
}
