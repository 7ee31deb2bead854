package core

import (
	"bytes"
	"context"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// ids hands out fake goroutine IDs: the core takes the ID as an argument,
// so these tests can drive it directly.
var ids atomic.Int64

func acquire(t *testing.T, l *Lock, g int64, ctx context.Context) error {
	t.Helper()
	if l.FastAcquire(g) {
		return nil
	}
	return l.Acquire(g, ctx, ClassMutex)
}

// TestLockMutualExclusionUnderCancellation mixes plain acquisitions with
// context acquisitions cancelled before the call and while queued, on 16
// goroutines. The shared counter is a plain int: the race detector reports
// any acquisition that did not happen after the previous release. At the
// end the lock word must be back to zero: no owner, no waiting, woken or
// starving flag left behind, whatever the cancellations did.
func TestLockMutualExclusionUnderCancellation(t *testing.T) {
	var l Lock
	var wg sync.WaitGroup
	counter, want := 0, int64(0)
	iters := 5000
	if testing.Short() {
		iters = 500
	}
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := ids.Add(1)
			for j := range iters {
				var ctx context.Context
				var cancel context.CancelFunc = func() {}
				if j%7 == i%7 {
					ctx, cancel = context.WithCancel(context.Background())
					if j%2 == 0 {
						cancel()
					} else {
						go cancel()
					}
				}
				err := acquire(t, &l, g, ctx)
				cancel()
				if err != nil {
					assert.ErrorIs(t, err, context.Canceled)
					assert.NotEqual(t, g, l.Owner(), "a failed acquisition left the lock held")
					continue
				}
				counter++
				atomic.AddInt64(&want, 1)
				if !l.Release(g) {
					t.Error("holder could not release")
					return
				}
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int(want), counter)
	assert.Zero(t, l.state.Load(), "lock word not clean: %#x", l.state.Load())
	assert.Zero(t, l.QueueLen())
}

func TestLockReleaseByNonOwnerChangesNothing(t *testing.T) {
	var l Lock
	require.True(t, l.FastAcquire(7))
	assert.False(t, l.Release(8))
	assert.Equal(t, int64(7), l.Owner())
	assert.True(t, l.Release(7))
	assert.False(t, l.Release(7), "release of a free lock")
	assert.Zero(t, l.state.Load())
}

func TestLockTryAcquireRespectsStarvation(t *testing.T) {
	var l Lock
	l.state.Store(flagStarving | flagWaiting)
	assert.False(t, l.TryAcquire(5), "a newcomer must not overtake a starving waiter")
	l.state.Store(0)
	assert.True(t, l.TryAcquire(5))
}

// TestLockContentionInBlockProfile checks that a goroutine parked in
// Acquire shows in Go's block profile, with Acquire on its stack, so that
// `go test -blockprofile` finds contention on locksmith locks.
func TestLockContentionInBlockProfile(t *testing.T) {
	runtime.SetBlockProfileRate(1)
	defer runtime.SetBlockProfileRate(0)
	var l Lock
	require.True(t, l.FastAcquire(1))
	done := make(chan struct{})
	go func() {
		defer close(done)
		assert.NoError(t, l.Acquire(2, nil, ClassMutex))
		l.Release(2)
	}()
	waitParked(t, "(*Lock).Acquire")
	l.Release(1)
	<-done
	var buf bytes.Buffer
	require.NoError(t, pprof.Lookup("block").WriteTo(&buf, 1))
	assert.Contains(t, buf.String(), "internal/core.(*Lock).Acquire")
}

// waitParked waits until some goroutine is parked (in a select or channel
// receive) with fn on its stack.
func waitParked(t *testing.T, fn string) {
	t.Helper()
	testutil.WaitFor(t, "a goroutine parked in "+fn, func() bool {
		for _, g := range strings.Split(testutil.AllStacks(), "\n\n") {
			if (strings.Contains(g, "[select]") || strings.Contains(g, "[chan receive]")) && strings.Contains(g, fn) {
				return true
			}
		}
		return false
	})
}

// While durable waiters are queued, tryAcquire lets only a goroutine of
// their domain take the lock, in the durable era it checked. The hook
// runs between mayTake's look at durDom and the CompareAndSwap, and there
// puts the net effect of the caller's era ending and another domain's
// beginning with the same state word (free, waiting, durable): durDom
// names the other domain. The lock changes durDom only under mu, so the
// hook does so only if mu is free.
func TestTryAcquireDurableEraChange(t *testing.T) {
	var l Lock
	mine := CurDomain()
	other := mine + 7 // a domain no goroutine of this test has
	l.durDom.Store(uint64(mine))
	l.state.Store(flagWaiting | flagDurable)
	testHookMayTake = func(l *Lock) {
		if l.mu.TryLock() {
			l.durDom.Store(uint64(other))
			l.mu.Unlock()
		}
	}
	defer func() { testHookMayTake = nil }()
	g := ids.Add(1)
	require.True(t, l.tryAcquire(g, 0), "a goroutine of the durable waiters' domain takes the free lock")
	assert.Equal(t, mine, Domain(l.durDom.Load()), "lock taken in front of another domain's durable waiters")

	testHookMayTake = nil
	require.True(t, l.Release(g))
	l.durDom.Store(uint64(other))
	assert.False(t, l.TryAcquire(ids.Add(1)), "a goroutine of another domain takes no lock while durable waiters are queued")
	assert.Equal(t, int64(flagWaiting|flagDurable), l.state.Load())
}
