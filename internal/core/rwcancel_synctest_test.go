//go:build go1.25

package core

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/gid"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// A reader of a bubble parked on sem (the writer, x, is outside the
// bubble), whose context callback dequeues it: from then on it has been
// told to return, and x, waiting for a lock the reader holds, closes no
// cycle through it (TestRWAbandonedReaderClosesNoCycle for a reader that
// notices its context itself; TestCancelledSemaWaiterNotInCycle for a
// Lock's waiter). The hook holds the callback between its dequeue of the
// reader and the reader's wakeup.
func TestRWCancelledSemReaderClosesNoCycle(t *testing.T) {
	if Mode() == ModeOff {
		t.Skip("needs Cycles mode")
	}
	var l RWLock
	var m Lock
	proceed := make(chan struct{}) // made outside the bubble, as every channel shared with x
	var release sync.Once
	defer release.Do(func() { close(proceed) })
	inHook := make(chan struct{})
	testHookCancelled = func(w *waiter) {
		if w.rw == &l && w.awaits == waitRead {
			close(inHook)
			<-proceed
		}
	}
	defer func() { testHookCancelled = nil }()

	xLocked, xGo := make(chan struct{}), make(chan struct{})
	xerr := make(chan error, 1)
	x := testutil.Spawn(func() { // outside the bubble
		g := gid.Get()
		if !assert.NoError(t, l.Lock(g, nil, ClassRWMutex)) {
			return
		}
		close(xLocked)
		<-xGo
		err := m.Acquire(g, nil, ClassMutex)
		xerr <- err
		if err == nil {
			m.Release(g)
		}
		l.Unlock(g)
	})
	testutil.Await(t, xLocked, "x locking l")

	rdone := make(chan struct{})
	go synctest.Test(t, func(t *testing.T) {
		defer close(rdone)
		ctx, cancel := context.WithCancel(context.Background())
		rg := make(chan int64, 1)
		go func() {
			g := gid.Get()
			rg <- g
			if !assert.True(t, m.FastAcquire(g)) {
				return
			}
			assert.ErrorIs(t, l.RLockDeadline(g, ctx, time.Time{}, ClassRWMutex), context.Canceled)
			m.Release(g)
		}()
		// The reader parks on sem, not durably (x is outside the bubble):
		// synctest.Wait would not return. Cancelled before it parks, it
		// would leave by its own look at ctx, not by the callback.
		g := <-rg
		testutil.WaitFor(t, "reader parked on sem", func() bool {
			state, stack, ok := testutil.GoroutineDump(g)
			return ok && strings.HasPrefix(state, "sync.Mutex.Lock") && strings.Contains(stack, "rlockWait") &&
				!strings.Contains(stack, "core.register") && l.QueuedReaders() == 1
		})
		cancel()
	})
	testutil.Await(t, inHook, "reader dequeued by its context")

	close(xGo)
	xg := x.ID(t)
	testutil.WaitFor(t, "x refused or parked on m", func() bool {
		if len(xerr) > 0 {
			return true
		}
		state, stack, ok := testutil.GoroutineDump(xg)
		return ok && state != "running" && state != "runnable" && strings.Contains(stack, "acquireDeadline")
	})
	release.Do(func() { close(proceed) })
	require.NoError(t, <-xerr, "x refused as closing a cycle through a reader told to return")
	testutil.Await(t, rdone, "bubble")
	assert.Nil(t, x.Wait(t))
	assert.Zero(t, l.Writer())
	assert.Zero(t, l.Readers())
	assert.Zero(t, m.Owner())
}
