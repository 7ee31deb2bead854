package core

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/gid"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// A reader whose context is done has decided to return: a goroutine that
// then waits for a lock the reader holds must not be refused as closing a
// deadlock through it. Goroutine x holds the writer lock of l; the reader
// holds m and queues behind x; its context is cancelled, and the hook
// holds it in abandonRead, on its way out. x then locks m: waiting for
// the reader, which no longer waits for x, closes no cycle, so x parks
// until the reader, returned, releases m. (Lock.acquireDeadline
// unregisters before it abandons a wait, for the same reason.)
func TestRWAbandonedReaderClosesNoCycle(t *testing.T) {
	if Mode() == ModeOff {
		t.Skip("needs Cycles mode")
	}
	var l RWLock
	var m Lock
	proceed := make(chan struct{})
	var release sync.Once
	defer release.Do(func() { close(proceed) }) // also when the test fails early
	inHook := make(chan struct{})
	testHookAbandonRead = func(hl *RWLock) {
		if hl == &l {
			close(inHook)
			<-proceed
		}
	}
	defer func() { testHookAbandonRead = nil }()

	xLocked, xGo := make(chan struct{}), make(chan struct{})
	xerr := make(chan error, 1)
	x := testutil.Spawn(func() {
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

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := testutil.Spawn(func() {
		g := gid.Get()
		if !assert.True(t, m.FastAcquire(g)) {
			return
		}
		assert.ErrorIs(t, l.RLockDeadline(g, ctx, time.Time{}, ClassRWMutex), context.Canceled)
		m.Release(g)
	})
	testutil.WaitFor(t, "reader queued", func() bool { return l.QueuedReaders() == 1 })
	cancel()
	testutil.Await(t, inHook, "reader abandoning its wait")

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
	require.NoError(t, <-xerr, "x refused as closing a cycle through a reader that had given up")
	assert.Nil(t, r.Wait(t))
	assert.Nil(t, x.Wait(t))
	assert.Zero(t, l.Writer())
	assert.Zero(t, l.Readers())
	assert.Zero(t, m.Owner())
}
