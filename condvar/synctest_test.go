//go:build go1.25

// testing/synctest.Test is Go 1.25; the module supports Go 1.24, whose
// toolchain skips this file.

package condvar_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/condvar"
)

// A goroutine blocked in Wait is durably blocked: synctest.Wait returns
// while it waits, on every kind of lock. (The lock and the Cond are made
// inside the bubble, as synctest requires of what its goroutines block on.)
func TestSynctestCondWaitDurablyBlocks(t *testing.T) {
	for _, k := range lockKinds() {
		t.Run(k.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l, held := k.new()
				c := condvar.New(l)
				ready := false // guarded by l
				done := make(chan bool, 1)
				go func() {
					l.Lock()
					for !ready {
						c.Wait()
					}
					done <- held == nil || held()
					l.Unlock()
				}()
				synctest.Wait()
				assert.Equal(t, 1, c.Waiters())
				assert.Empty(t, done)
				l.Lock()
				ready = true
				c.Signal()
				l.Unlock()
				assert.True(t, <-done)
			})
		})
	}
}

// WaitTimeout and WaitContext run on the bubble's fake clock: an hour-long
// wait that nobody signals returns false at once, an hour later in bubble
// time, and a signal before the hour is up wins.
func TestSynctestCondWaitTimeoutFakeClock(t *testing.T) {
	for _, k := range lockKinds() {
		t.Run(k.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l, _ := k.new()
				c := condvar.New(l)
				start := time.Now()
				l.Lock()
				require.False(t, c.WaitTimeout(time.Hour))
				assert.Equal(t, time.Hour, time.Since(start))

				ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
				defer cancel()
				require.ErrorIs(t, c.WaitContext(ctx), context.DeadlineExceeded)
				assert.Equal(t, 2*time.Hour, time.Since(start))
				l.Unlock()

				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					time.Sleep(time.Minute) // bubble time: the fake clock
					l.Lock()
					c.Signal()
					l.Unlock()
				}()
				l.Lock()
				assert.True(t, c.WaitTimeout(time.Hour))
				assert.Equal(t, 2*time.Hour+time.Minute, time.Since(start))
				l.Unlock()
				wg.Wait()
				assert.Zero(t, c.Waiters())
			})
		})
	}
}
