package monitor_test

// Faults: what a panic, and a cancellation at any point of a wait, do to
// the locks.

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/locktest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errBoom = errors.New("boom")

// TestFaultPanicInsideDoReleasesEverything: a panic inside Monitor.Do, with
// more locks taken under deferred Unlocks inside it, re-entry, and nested
// Do calls, unwinds to a recover that finds every lock released (the
// monitor back at the hold count it had before Do) and usable by others.
func TestFaultPanicInsideDoReleasesEverything(t *testing.T) {
	locktest.ForEachModeQuiet(t, func(t *testing.T) {
		var (
			outer, inner monitor.Monitor
			mu           mutex.Mutex
		)
		outer.Lock() // a hold from before: Do must give back only its own
		v := testutil.Catch(func() {
			outer.Do(func() {
				require.Equal(t, 2, outer.HoldCount())
				mu.Lock()
				defer mu.Unlock()
				inner.Lock()
				defer inner.Unlock()
				inner.Do(func() {
					outer.Do(func() {
						require.Equal(t, 3, outer.HoldCount())
						require.Equal(t, 2, inner.HoldCount())
						panic(errBoom)
					})
				})
			})
		})
		require.Equal(t, errBoom, v)
		assert.Equal(t, 1, outer.HoldCount())
		assert.Zero(t, inner.HoldCount())
		assert.False(t, mu.Owned())
		testutil.Usable(t, &inner)
		testutil.Usable(t, &mu)
		outer.Unlock()
		testutil.Usable(t, &outer)
	})
}

// TestFaultPanicUnderDeferredUnlock: a goroutine that panics while holding
// locks taken with deferred Unlocks (including a Monitor re-entered, each
// Lock with its own defer) leaves them free and usable, once its panic is
// recovered at the top of the goroutine.
func TestFaultPanicUnderDeferredUnlock(t *testing.T) {
	locktest.ForEachModeQuiet(t, func(t *testing.T) {
		var (
			mu  mutex.Mutex
			mon monitor.Monitor
		)
		// Named so that the Dump check below looks at these locks only:
		// other tests leave exited holders behind on purpose.
		detect.SetName(&mu, "deferred-unlock mutex")
		detect.SetName(&mon, "deferred-unlock monitor")
		c := mon.NewCond()
		recovered := make(chan any, 1)
		go func() {
			defer func() { recovered <- recover() }()
			mu.Lock()
			defer mu.Unlock()
			mon.Lock()
			defer mon.Unlock()
			mon.Lock()
			defer mon.Unlock()
			c.WaitTimeout(time.Nanosecond) // a wait restores both holds...
			if mon.HoldCount() != 2 {
				panic("hold count not restored")
			}
			panic(errBoom) // ...and the panic gives them back
		}()
		require.Equal(t, errBoom, testutil.Await(t, recovered, "panicking goroutine"))
		testutil.Usable(t, &mu)
		testutil.Usable(t, &mon)
		if detect.CurrentMode() == detect.Order {
			// The detector forgot the holds too: Dump lists neither lock.
			var buf bytes.Buffer
			detect.Dump(&buf)
			assert.NotContains(t, buf.String(), "deferred-unlock", buf.String())
		}
	})
}

// LockContext cancelled before the call, while queued and racing the
// handoff, in every detection mode.
func TestFaultMonitorLockContextCancelledAtEveryPoint(t *testing.T) {
	locktest.LockContextCancelledAtEveryPoint(t, timedMonitor)
}
