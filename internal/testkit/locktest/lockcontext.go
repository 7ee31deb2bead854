package locktest

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// LockContext checks LockContext's contract for a caller that does not
// hold the lock: it waits for the last Unlock; a context already done
// fails even when the lock is free; cancellation or a deadline while
// queued returns ctx.Err() and leaves the holder's holds and the queue as
// they were.
func LockContext(t *testing.T, c Lock) {
	t.Run("free", func(t *testing.T) {
		m := c.New()
		require.NoError(t, m.LockContext(context.Background()))
		assert.Equal(t, 1, c.Holds(m))
		m.Unlock()
		assert.False(t, m.Locked())
	})

	t.Run("already cancelled fails even when free", func(t *testing.T) {
		m := c.New()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		assert.ErrorIs(t, m.LockContext(ctx), context.Canceled)
		assert.False(t, m.Locked())
		assert.Zero(t, c.Holds(m))
	})

	t.Run("already expired fails even when free", func(t *testing.T) {
		m := c.New()
		ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
		defer cancel()
		assert.ErrorIs(t, m.LockContext(ctx), context.DeadlineExceeded)
		assert.False(t, m.Locked())
	})

	t.Run("waits for the last Unlock", func(t *testing.T) {
		m := c.New()
		for range c.depth() {
			m.Lock()
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		res := make(chan error)
		go func() {
			err := m.LockContext(ctx)
			if h := c.Holds(m); err == nil && h != 1 {
				err = fmt.Errorf("LockContext returned nil with hold count %d", h)
			}
			if err == nil {
				m.Unlock()
			}
			res <- err
		}()
		testutil.WaitFor(t, "LockContext queued", func() bool { return c.QueueLen(m) == 1 })
		for range c.depth() {
			m.Unlock()
		}
		assert.NoError(t, testutil.Await(t, res, "LockContext"))
		assert.False(t, m.Locked())
	})

	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		stop func(cancel context.CancelFunc) // ends the wait
		want error
	}{
		{
			name: "cancel while queued",
			ctx:  func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			stop: func(cancel context.CancelFunc) { cancel() },
			want: context.Canceled,
		},
		{
			name: "deadline while queued",
			// The deadline is what is under test, not a synchronization:
			// the lock stays held until the deadline has passed.
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), time.Millisecond)
			},
			stop: func(context.CancelFunc) {},
			want: context.DeadlineExceeded,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := c.New()
			for range c.depth() {
				m.Lock()
			}
			ctx, cancel := tc.ctx()
			defer cancel()
			type result struct {
				err   error
				holds int
			}
			res := make(chan result)
			go func() {
				err := m.LockContext(ctx)
				res <- result{err, c.Holds(m)}
			}()
			testutil.WaitFor(t, "LockContext queued", func() bool { return c.QueueLen(m) == 1 || ctx.Err() != nil })
			tc.stop(cancel)
			r := testutil.Await(t, res, "LockContext")
			assert.ErrorIs(t, r.err, tc.want)
			assert.Equal(t, ctx.Err(), r.err, "LockContext returns ctx.Err()")
			assert.Zero(t, r.holds, "failed LockContext left the caller holding m")
			assert.Equal(t, c.depth(), c.Holds(m), "failed LockContext changed the holder's holds")
			assert.Zero(t, c.QueueLen(m), "failed LockContext left a queue entry")
			for range c.depth() {
				m.Unlock()
			}
			assert.False(t, m.Locked())
			require.True(t, m.TryLock())
			m.Unlock()
		})
	}
}

// LockContextCancelRacesUnlock cancels a queued LockContext at the moment
// the holder's last Unlock releases the lock. Whatever wins, the waiter
// either holds the lock with a nil error or does not hold it with
// ctx.Err(); a wakeup that reached the cancelled waiter is handed on to the
// next waiter; and the lock ends free and usable.
func LockContextCancelRacesUnlock(t *testing.T, c Lock) {
	rounds := 500
	if testing.Short() {
		rounds = 100
	}
	var won, lost int
	for i := range rounds {
		m := c.New()
		for range c.depth() {
			m.Lock()
		}
		ctx, cancel := context.WithCancel(context.Background())
		type result struct {
			err   error
			holds int
		}
		res := make(chan result, 1)
		go func() {
			err := m.LockContext(ctx)
			r := result{err, c.Holds(m)}
			if err == nil {
				m.Unlock()
			}
			res <- r
		}()
		testutil.WaitFor(t, "LockContext queued", func() bool { return c.QueueLen(m) == 1 })

		// Every other round, a second goroutine queues behind the first in
		// plain Lock: it must get the lock whatever happens to the first.
		second := make(chan int, 1)
		withSecond := i%2 == 0
		if withSecond {
			go func() {
				m.Lock()
				second <- c.Holds(m)
				m.Unlock()
			}()
			testutil.WaitFor(t, "Lock queued", func() bool { return c.QueueLen(m) == 2 })
		}
		for range c.depth() - 1 {
			m.Unlock()
		}
		go cancel()
		if i%4 < 2 {
			runtime.Gosched()
		}
		m.Unlock()

		r := testutil.Await(t, res, "LockContext")
		if r.err != nil {
			lost++
			require.ErrorIs(t, r.err, context.Canceled)
			require.Zero(t, r.holds, "round %d: LockContext failed but the caller holds m", i)
		} else {
			won++
			require.Equal(t, 1, r.holds, "round %d: LockContext succeeded without the lock", i)
		}
		if withSecond {
			require.Equal(t, 1, testutil.Await(t, second, "second waiter after a cancelled first"), "round %d", i)
		}
		ctx2, cancel2 := context.WithTimeout(context.Background(), testutil.Liveness)
		require.NoError(t, m.LockContext(ctx2), "round %d: %s not free after the race", i, c.Name)
		cancel2()
		m.Unlock()
		require.False(t, m.Locked())
		require.Zero(t, c.QueueLen(m))
		cancel()
	}
	t.Logf("LockContext won %d rounds, cancellation won %d", won, lost)
}
