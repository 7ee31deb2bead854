package condvar_test

// Faults: a cancellation at any point of a wait.

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/internal/testkit/locktest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// condLock is a lock kind for the WaitContext tests, with how many holds
// a waiter takes (a Monitor is re-entered, to check the count comes back).
type condLock struct {
	l     sync.Locker
	holds int
	check func(t *testing.T, holds int) // on the waiter, after a wait: it holds the lock holds times
}

func condLocks() map[string]func() condLock {
	return map[string]func() condLock{
		"sync.Mutex": func() condLock {
			return condLock{l: new(sync.Mutex), holds: 1, check: func(_ *testing.T, _ int) {}}
		},
		"mutex.Mutex": func() condLock {
			m := new(mutex.Mutex)
			return condLock{l: m, holds: 1, check: func(t *testing.T, _ int) { assert.True(t, m.Owned(), "not held after the wait") }}
		},
		"monitor.Monitor": func() condLock {
			m := new(monitor.Monitor)
			return condLock{l: m, holds: 2, check: func(t *testing.T, holds int) { assert.Equal(t, holds, m.HoldCount()) }}
		},
	}
}

// waitCtxOn starts a goroutine that takes cl's lock, waits on c with ctx,
// checks it holds the lock again as before, and unlocks; the channel
// delivers WaitContext's result. It returns once the goroutine is queued
// on c (c has want waiters).
func waitCtxOn(t *testing.T, cl condLock, c *condvar.Cond, ctx context.Context, want int) <-chan error {
	t.Helper()
	res := make(chan error, 1)
	go func() {
		for range cl.holds {
			cl.l.Lock()
		}
		err := c.WaitContext(ctx)
		cl.check(t, cl.holds)
		for range cl.holds {
			cl.l.Unlock()
		}
		res <- err
	}()
	deadline := time.Now().Add(testutil.Liveness)
	for c.Waiters() != want {
		require.False(t, time.Now().After(deadline), "waiter never queued")
		runtime.Gosched()
	}
	return res
}

// TestFaultWaitContextCancelledAtEveryPoint cancels WaitContext before the
// call, while it waits, and racing the Signal that wakes it, with a second
// waiter behind it, many times. Whatever wins, the waiter returns holding
// the lock as it held it before, and the Signal is not lost: it woke
// either the cancelled waiter (which then returns nil) or the next.
func TestFaultWaitContextCancelledAtEveryPoint(t *testing.T) {
	rounds := 300
	if testing.Short() {
		rounds = 50
	}
	locktest.ForEachModeQuiet(t, func(t *testing.T) {
		for name, newLock := range condLocks() {
			t.Run(name, func(t *testing.T) {
				t.Run("before the call", func(t *testing.T) {
					cl := newLock()
					c := condvar.New(cl.l)
					ctx, cancel := context.WithCancel(context.Background())
					cancel()
					testutil.OnOther(t, func() {
						for range cl.holds {
							cl.l.Lock()
						}
						assert.ErrorIs(t, c.WaitContext(ctx), context.Canceled)
						cl.check(t, cl.holds)
						for range cl.holds {
							cl.l.Unlock()
						}
					})
				})
				t.Run("while waiting", func(t *testing.T) {
					cl := newLock()
					c := condvar.New(cl.l)
					ctx, cancel := context.WithCancel(context.Background())
					res := waitCtxOn(t, cl, c, ctx, 1)
					cancel()
					assert.ErrorIs(t, testutil.Await(t, res, "WaitContext"), context.Canceled)
					assert.Zero(t, c.Waiters())
				})
				t.Run("racing Signal", func(t *testing.T) {
					cl := newLock()
					c := condvar.New(cl.l)
					signalled, cancelled := 0, 0
					for i := range rounds {
						ctx, cancel := context.WithCancel(context.Background())
						first := waitCtxOn(t, cl, c, ctx, 1)
						second := waitCtxOn(t, cl, c, context.Background(), 2)
						cl.l.Lock()
						testutil.RaceOrder(i, cancel, func() {
							// The cancelled waiter leaves the queue on its own.
							deadline := time.Now().Add(testutil.Liveness)
							for c.Waiters() != 1 {
								require.False(t, time.Now().After(deadline), "the cancelled waiter never left")
								runtime.Gosched()
							}
						}, c.Signal)
						cl.l.Unlock()
						err := testutil.Await(t, first, "cancelled WaitContext")
						if err == nil {
							// The Signal chose it: the second still waits.
							signalled++
							require.Equal(t, 1, c.Waiters())
							cl.l.Lock()
							c.Signal()
							cl.l.Unlock()
						} else {
							// The cancellation won: the Signal went to the second.
							cancelled++
							require.ErrorIs(t, err, context.Canceled)
						}
						require.NoError(t, testutil.Await(t, second, "second waiter"))
						require.Zero(t, c.Waiters())
					}
					t.Logf("%d rounds: Signal won %d, cancellation won %d", rounds, signalled, cancelled)
				})
			})
		}
	})
}
