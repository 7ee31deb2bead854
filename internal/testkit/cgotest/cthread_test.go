//go:build cgo

package cgotest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/mutex"
)

// The callbacks of one C thread into Go are one goroutine, to the runtime
// and so to the locks: a Mutex that the first callback locks is Owned in
// the second. Once the thread has exited, the goroutine is not listed in
// a dump, and the lock it left held counts as held by an exited goroutine:
// Dump says so, and a wait for it fails as a Deadlock naming that
// goroutine, rather than waiting until some later C thread's callback,
// which the runtime may give the same goroutine ID, unlocks it. (When it
// does, that callback owns the lock: it is the same goroutine to the
// runtime.) A read lock left by an exited thread's callback is reported
// to a writer the same way.
func TestCThreadCallbacksHoldingLocks(t *testing.T) {
	for _, mode := range []detect.Mode{detect.Cycles, detect.Order} {
		t.Run(mode.String(), func(t *testing.T) {
			detecttest.Configure(t, detect.WithMode(mode))
			var mu mutex.Mutex
			detect.SetName(&mu, "cgo-mutex")
			var g1, g1again int64
			ownedAgain := false
			OnCThread(func() {
				g1 = testutil.GoroutineID()
				mu.Lock() // and the callback returns holding it
			}, func() {
				g1again = testutil.GoroutineID()
				ownedAgain = mu.Owned()
			})
			require.Equal(t, g1, g1again, "one C thread's callbacks are one goroutine")
			assert.True(t, ownedAgain, "the second callback owns what the first locked")
			_, _, listed := testutil.GoroutineDump(g1)
			require.False(t, listed, "the goroutine of an exited C thread is not listed")

			if mode == detect.Order {
				var b bytes.Buffer
				detect.Dump(&b)
				assert.Contains(t, b.String(), fmt.Sprintf("goroutine %d (exited) holds:", g1), b.String())
			}
			v := testutil.Catch(mu.Lock) // from a goroutine of Go's own
			de := detecttest.DeadlockError(t, v)
			require.Len(t, de.Report.Steps, 2)
			assert.Equal(t, g1, de.Report.Steps[1].Goroutine)
			assert.True(t, de.Report.Steps[1].Exited)
			assert.Equal(t, "cgo-mutex", detecttest.LockName(de.Report.Steps[1].Holds))

			// A later C thread's callback: the lock is its own if the
			// runtime gave it the same goroutine, and it may unlock it.
			var g2 int64
			owned2, unlocked := false, false
			OnCThread(func() {
				g2 = testutil.GoroutineID()
				if owned2 = mu.Owned(); owned2 {
					mu.Unlock()
					unlocked = true
				}
			})
			assert.Equal(t, g2 == g1, owned2, "ownership follows the goroutine ID")
			if unlocked {
				require.True(t, mu.TryLock())
				mu.Unlock()
			} else {
				t.Logf("the second C thread ran as goroutine %d, not %d", g2, g1)
			}

			var rw mutex.RWMutex
			detect.SetName(&rw, "cgo-rwmutex")
			var r int64
			OnCThread(func() {
				r = testutil.GoroutineID()
				rw.RLock()
			})
			de = detecttest.DeadlockError(t, testutil.Catch(rw.Lock))
			require.Len(t, de.Report.Steps, 2)
			assert.Equal(t, r, de.Report.Steps[1].Goroutine)
			assert.True(t, de.Report.Steps[1].HoldsForReading)
			assert.True(t, de.Report.Steps[1].Exited)
			// The thread's goroutine alone may unlock it, if a new C
			// thread gets it.
			OnCThread(func() {
				if rw.ReadOwned() {
					rw.RUnlock()
				}
			})
		})
	}
}
