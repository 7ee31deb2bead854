//go:build go1.25

package core

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/gid"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// TestCancelledSemaWaiterNotInCycle: a waiter parked on its semaphore (in
// a bubble, behind a holder outside it) whose context's callback has
// dequeued it has given up; a goroutine that parks meanwhile on a lock
// the cancelled waiter still holds closes no cycle through it, and waits
// until the cancelled waiter returns and releases.
func TestCancelledSemaWaiterNotInCycle(t *testing.T) {
	var l1, l2 Lock
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_ = ctx.Done() // its channel made outside the bubble, which cancel closes

	// B, outside any bubble, holds l2; later it waits for l1.
	gb := make(chan int64)
	bGo := make(chan struct{})
	bErr := make(chan error, 1)
	go func() {
		g := gid.Get()
		require.True(t, l2.FastAcquire(g))
		gb <- g
		<-bGo
		err := l1.AcquireDeadline(g, nil, time.Time{}, ClassMutex)
		if err == nil {
			l1.Release(g)
		}
		l2.Release(g)
		bErr <- err
	}()
	b := <-gb

	// The hook runs on the cancelling callback's goroutine, outside the
	// bubble, while the waiter is dequeued and not yet woken: B then waits
	// for l1, and the hook returns once B has parked or refused.
	var a int64
	testHookCancelled = func(w *waiter) {
		if w.g != a {
			return
		}
		close(bGo)
		testutil.WaitFor(t, "B parked on l1 or refused", func() bool {
			if len(bErr) > 0 {
				return true
			}
			w, ok := waitingOn(b)
			state, _, _ := testutil.GoroutineDump(b)
			return ok && w.lock == &l1 && (state == "select" || state == "chan receive")
		})
	}
	defer func() { testHookCancelled = nil }()

	ga := make(chan int64, 1)
	aErr := make(chan error, 1)
	bubble := make(chan struct{})
	go func() {
		defer close(bubble)
		synctest.Test(t, func(t *testing.T) {
			g := gid.Get()
			require.True(t, l1.FastAcquire(g))
			ga <- g
			aErr <- l2.AcquireDeadline(g, ctx, time.Time{}, ClassMutex)
			l1.Release(g)
		})
	}()
	a = <-ga
	testutil.WaitFor(t, "A parked on its semaphore behind B", func() bool {
		if _, ok := waitingOn(a); !ok {
			return false
		}
		l2.mu.Lock()
		defer l2.mu.Unlock()
		for w := l2.q.head; w != nil; w = w.next {
			if w.g == a {
				return w.inq && w.sema
			}
		}
		return false
	})
	cancel()
	<-bubble
	assert.ErrorIs(t, <-aErr, context.Canceled)
	assert.NoError(t, <-bErr, "B waited for l1, held by a waiter that had given up")
}
