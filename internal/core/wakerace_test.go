//go:build go1.25

package core

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/gid"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// A releaser outside any bubble sets woken and, before it dequeues the
// waiter it means to wake, that waiter leaves the queue, a goroutine of a
// bubble takes the free lock and another of the bubble queues behind it.
// The releaser then dequeues and wakes that one, from outside its bubble:
// it must have parked where anyone may wake it, not durably (where the
// wakeup would be the runtime's fatal error, which checkWaker turns into
// a panic). The hook runs in the releaser's goroutine, this test's.
func TestDurableNotBehindPendingWake(t *testing.T) {
	var l Lock
	h := gid.Get()
	require.True(t, l.FastAcquire(h))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	left := make(chan error, 1)
	go func() { left <- l.Acquire(gid.Get(), ctx, ClassMutex) }() // outside any bubble
	testutil.WaitFor(t, "the outside waiter queued", func() bool { return l.QueueLen() == 1 })

	queued := make(chan struct{}) // made outside any bubble: both sides may use it
	release := make(chan struct{})
	bubbleDone := make(chan struct{})
	var parked *waiter // the bubble's waiter, as the releaser finds it queued
	var fired atomic.Bool
	testHookWake = func(hl *Lock) {
		if hl != &l || !fired.CompareAndSwap(false, true) {
			return
		}
		cancel()
		require.ErrorIs(t, <-left, context.Canceled)
		go func() {
			defer close(bubbleDone)
			synctest.Test(t, func(t *testing.T) {
				holder := gid.Get()
				require.True(t, l.TryAcquire(holder), "the lock is free, woken set")
				done := make(chan error, 1)
				go func() {
					g := gid.Get()
					err := l.Acquire(g, nil, ClassMutex)
					if err == nil {
						l.Release(g)
					}
					done <- err
				}()
				for l.QueueLen() != 1 {
					runtime.Gosched() // not a durable wait either way
				}
				queued <- struct{}{}
				<-release
				l.Release(holder)
				select {
				case err := <-done:
					require.NoError(t, err)
				case <-time.After(time.Hour):
					t.Error("the waiter, dequeued by a failed wakeup, was never woken")
					parked.wake(parked.sema) // from its bubble: let it finish
					require.NoError(t, <-done)
				}
			})
		}()
		<-queued
		l.mu.Lock()
		parked = l.q.head
		l.mu.Unlock()
	}
	defer func() { testHookWake = nil }()

	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("the release panicked: %v", r)
			}
		}()
		require.True(t, l.Release(h))
	}()
	close(release)
	testutil.Await(t, bubbleDone, "the bubble")
	assert.Zero(t, l.Owner())
	assert.Zero(t, l.QueueLen())
}
