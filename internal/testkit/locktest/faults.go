package locktest

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parkedOnLock reports whether goroutine g is parked in a locksmith lock's
// wait queue (its stack shows it blocked inside core.(*Lock).Acquire).
func parkedOnLock(g int64) bool {
	state, stack, ok := testutil.GoroutineDump(g)
	return ok && state != "running" && state != "runnable" && strings.Contains(stack, "internal/core.(*Lock).Acquire")
}

// waitParkedOnLock waits until goroutine g is parked in a lock's wait
// queue, whatever the detection mode (detecttest.WaitParked needs the
// detector's registry).
func waitParkedOnLock(t *testing.T, g int64) {
	t.Helper()
	deadline := time.Now().Add(testutil.Liveness)
	// A stack dump costs far more than a yield: look now and then.
	for i := 0; i%32 != 0 || !parkedOnLock(g); i++ {
		require.False(t, time.Now().After(deadline), "goroutine %d never parked on the lock", g)
		runtime.Gosched()
	}
}

type lockResult struct {
	err   error
	owned bool
}

// lockCtxOn runs LockContext on a new goroutine; the result channel
// delivers its error and whether the goroutine then held the lock, after
// which the goroutine has released it if it held it.
func lockCtxOn(l TimedLock, ctx context.Context) (id int64, res <-chan lockResult) {
	ids := make(chan int64, 1)
	ch := make(chan lockResult, 1)
	go func() {
		ids <- testutil.GoroutineID()
		err := l.LockContext(ctx)
		r := lockResult{err, l.Owned()}
		if err == nil && r.owned {
			l.Unlock()
		}
		ch <- r
	}()
	return <-ids, ch
}

// LockContextCancelledAtEveryPoint cancels LockContext before the call,
// while it is queued, and racing the Unlock that hands it the lock (with
// and without another waiter behind it), many times, in every detection
// mode. A LockContext
// that returns an error never leaves the caller holding the lock, and a
// grant that reached it after it gave up goes to the next waiter or leaves
// the lock free.
func LockContextCancelledAtEveryPoint(t *testing.T, c Lock) {
	rounds := 300
	if testing.Short() {
		rounds = 50
	}
	ForEachModeQuiet(t, func(t *testing.T) {
		t.Run("before the call", func(t *testing.T) {
			l := c.New()
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, res := lockCtxOn(l, ctx)
			r := testutil.Await(t, res, "LockContext")
			assert.ErrorIs(t, r.err, context.Canceled, "fails even though the lock is free")
			assert.False(t, r.owned)
			testutil.Usable(t, l)
		})
		t.Run("while queued", func(t *testing.T) {
			l := c.New()
			l.Lock()
			ctx, cancel := context.WithCancel(context.Background())
			g, res := lockCtxOn(l, ctx)
			waitParkedOnLock(t, g)
			cancel()
			r := testutil.Await(t, res, "LockContext")
			assert.ErrorIs(t, r.err, context.Canceled)
			assert.False(t, r.owned)
			assert.True(t, l.Owned(), "the holder still holds it")
			l.Unlock()
			testutil.Usable(t, l)
		})
		t.Run("racing the handoff", func(t *testing.T) {
			l := c.New()
			won, lost := 0, 0
			for i := range rounds {
				l.Lock()
				ctx, cancel := context.WithCancel(context.Background())
				g, res := lockCtxOn(l, ctx)
				waitParkedOnLock(t, g)
				testutil.RaceOrder(i, cancel, nil, l.Unlock)
				r := testutil.Await(t, res, "LockContext")
				if r.err != nil {
					lost++
					require.ErrorIs(t, r.err, context.Canceled)
					require.False(t, r.owned, "LockContext returned %v but the caller holds the lock", r.err)
				} else {
					won++
					require.True(t, r.owned)
				}
				// Either way the lock is free now: a grant that
				// arrived after the cancellation was given back.
				require.False(t, l.Locked(), "left locked (LockContext returned %v)", r.err)
			}
			t.Logf("%d rounds: LockContext won %d, cancellation won %d", rounds, won, lost)
		})
		t.Run("racing the handoff with a waiter behind", func(t *testing.T) {
			l := c.New()
			for i := range rounds {
				l.Lock()
				ctx, cancel := context.WithCancel(context.Background())
				g1, res1 := lockCtxOn(l, ctx)
				waitParkedOnLock(t, g1)
				g2, res2 := lockCtxOn(l, context.Background()) // never cancelled
				waitParkedOnLock(t, g2)
				testutil.RaceOrder(i, cancel, nil, l.Unlock)
				r1 := testutil.Await(t, res1, "cancelled LockContext")
				require.True(t, r1.err == nil || errors.Is(r1.err, context.Canceled), "%v", r1.err)
				require.Equal(t, r1.err == nil, r1.owned, "LockContext returned %v", r1.err)
				// The second waiter gets the lock in any case: a grant
				// that reached the first after it gave up is passed on.
				r2 := testutil.Await(t, res2, "second waiter")
				require.NoError(t, r2.err)
				require.True(t, r2.owned)
				require.False(t, l.Locked())
			}
		})
	})
}
