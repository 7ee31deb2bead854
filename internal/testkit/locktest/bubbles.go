//go:build go1.25

package locktest

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// hammerShared takes m n times (re-entering it once inside, for a
// reentrant lock), through Lock, TryLock and LockContext (with contexts
// that another goroutine cancels, so that some waits are cancelled while
// queued), and counts its acquisitions in count and in *guarded, which m
// guards.
func (c Lock) hammerShared(m TimedLock, n int, guarded *int, count *atomic.Int64) {
	for i := range n {
		switch i % 4 {
		case 1:
			if !m.TryLock() {
				continue
			}
		case 2:
			ctx, cancel := context.WithCancel(context.Background())
			go cancel()
			err := m.LockContext(ctx)
			cancel()
			if err != nil {
				continue
			}
		default:
			m.Lock()
		}
		if c.Reentrant {
			m.Lock()
		}
		*guarded++
		count.Add(1)
		if c.Reentrant {
			m.Unlock()
		}
		m.Unlock()
	}
}

// SharedAcrossBubbles has two testing/synctest bubbles and goroutines
// outside any hammer m, a package-level lock of c, at the same time:
// nothing dies, and every acquisition is exclusive.
func SharedAcrossBubbles(t *testing.T, c Lock, m TimedLock) {
	const rounds, workers, iters = 8, 4, 2000
	var count atomic.Int64
	n := 0 // guarded by m
	for range rounds {
		testutil.AcrossBubbles(t, 2, func(t *testing.T) {
			testutil.Workers(workers, func(int) { c.hammerShared(m, iters, &n, &count) })
		}, workers, func() { c.hammerShared(m, iters, &n, &count) })
	}
	m.Lock()
	assert.Equal(t, int(count.Load()), n, "every acquisition was exclusive")
	m.Unlock()
	assert.Zero(t, c.QueueLen(m))
}

// DurableInOneBubble checks that m, a package-level lock of c that may
// have been shared before, parks the waiters of the one bubble that uses
// it durably: durability is decided by who can wake a waiter while it
// waits, not by the lock's history.
func DurableInOneBubble(t *testing.T, c Lock, m TimedLock) {
	synctest.Test(t, func(t *testing.T) {
		m.Lock()
		done := make(chan struct{})
		go func() {
			defer close(done)
			m.Lock()
			m.Unlock()
		}()
		synctest.Wait() // returns only if the waiter is durably blocked
		assert.Equal(t, 1, c.QueueLen(m))
		time.Sleep(time.Hour) // fake time advances while the waiter waits
		m.Unlock()
		<-done
	})
}
