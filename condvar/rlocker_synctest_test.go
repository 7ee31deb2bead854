//go:build go1.25

// testing/synctest.Test is Go 1.25; older toolchains skip this file.

package condvar_test

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// A reader waiting on a Cond of rw.RLocker() made in its bubble is durably
// blocked (synctest.Wait returns while it waits), is woken by a writer of
// the bubble with its read holds restored, and a WaitTimeout nobody
// signals runs on the bubble's fake clock.
func TestSynctestCondRLockerDurable(t *testing.T) {
	for _, k := range readKinds() {
		t.Run(k.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rw := k.new()
				c := condvar.New(rw.RLocker())
				ready := false // written under the write lock
				done := make(chan int, 1)
				go func() {
					for range k.holds {
						rw.RLock()
					}
					for !ready {
						c.Wait()
					}
					n := readHolds(rw)
					for range n {
						rw.RUnlock()
					}
					done <- n
				}()
				synctest.Wait()
				assert.Equal(t, 1, c.Waiters())
				assert.Empty(t, done)
				rw.Lock()
				ready = true
				c.Signal()
				rw.Unlock()
				assert.Equal(t, k.holds, <-done)

				start := time.Now()
				for range k.holds {
					rw.RLock()
				}
				assert.False(t, c.WaitTimeout(time.Hour))
				assert.Equal(t, time.Hour, time.Since(start), "the wait ran on the fake clock")
				assert.Equal(t, k.holds, readHolds(rw))
				for range k.holds {
					rw.RUnlock()
				}
			})
		})
	}
}

// Package-level, so that two bubbles and the outside share them.
var (
	sharedRWMu   mutex.RWMutex
	sharedRWMuC  = condvar.New(sharedRWMu.RLocker())
	sharedRWMon  monitor.RWMonitor
	sharedRWMonC = condvar.New(sharedRWMon.RLocker())
)

// A read lock and its Cond shared by two bubbles and goroutines outside
// never kill the program, and no wakeup is lost: each worker alternately
// adds a token under the write lock (with a Broadcast) and takes one
// under the read lock, waiting on the Cond while there is none; the
// workload finishes, and every token is taken.
func TestSynctestCondRLockerSharedAcrossBubbles(t *testing.T) {
	for _, tc := range []struct {
		name string
		rw   rwLock
		c    *condvar.Cond
	}{
		{"mutex.RWMutex", &sharedRWMu, sharedRWMuC},
		{"monitor.RWMonitor", &sharedRWMon, sharedRWMonC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const rounds, workers, iters = 4, 3, 300
			var tokens atomic.Int64 // added under the write lock, taken under the read lock
			var taken atomic.Int64
			work := func() {
				for range iters {
					tc.rw.Lock()
					tokens.Add(1)
					tc.c.Broadcast()
					tc.rw.Unlock()

					tc.rw.RLock()
					for {
						n := tokens.Load()
						if n > 0 && tokens.CompareAndSwap(n, n-1) {
							break
						}
						if n == 0 {
							tc.c.Wait()
						}
					}
					tc.rw.RUnlock()
					taken.Add(1)
				}
			}
			for range rounds {
				testutil.AcrossBubbles(t, 2, func(t *testing.T) {
					testutil.Workers(workers, func(int) { work() })
				}, workers, work)
			}
			assert.Equal(t, int64(rounds*3*workers*iters), taken.Load())
			assert.Zero(t, tokens.Load())
			assert.Zero(t, tc.c.Waiters())
		})
	}
}
