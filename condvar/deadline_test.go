package condvar_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/misuse"
)

// TestDeadlineWaitMisuse: on an owner-aware lock, each deadline wait made
// without holding the lock panics with ErrNotOwner, also when its
// condition already holds or its time is up, and changes nothing.
func TestDeadlineWaitMisuse(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	yes := func() bool { return true }
	no := func() bool { return false }
	ops := []struct {
		name string
		call func(c *condvar.Cond)
	}{
		{"WaitDeadline", func(c *condvar.Cond) { c.WaitDeadline(time.Now().Add(time.Hour)) }},
		{"WaitDeadline past", func(c *condvar.Cond) { c.WaitDeadline(time.Now().Add(-time.Hour)) }},
		{"WaitUntilTimeout", func(c *condvar.Cond) { c.WaitUntilTimeout(time.Hour, no) }},
		{"WaitUntilTimeout true at once", func(c *condvar.Cond) { c.WaitUntilTimeout(time.Hour, yes) }},
		{"WaitUntilTimeout(0)", func(c *condvar.Cond) { c.WaitUntilTimeout(0, no) }},
		{"WaitWhileTimeout", func(c *condvar.Cond) { c.WaitWhileTimeout(time.Hour, yes) }},
		{"WaitWhileTimeout false at once", func(c *condvar.Cond) { c.WaitWhileTimeout(time.Hour, no) }},
		{"WaitUntilContext", func(c *condvar.Cond) { _ = c.WaitUntilContext(context.Background(), no) }},
		{"WaitUntilContext true at once", func(c *condvar.Cond) { _ = c.WaitUntilContext(context.Background(), yes) }},
		{"WaitUntilContext(done)", func(c *condvar.Cond) { _ = c.WaitUntilContext(done, no) }},
		{"WaitWhileContext", func(c *condvar.Cond) { _ = c.WaitWhileContext(context.Background(), yes) }},
		{"WaitWhileContext false at once", func(c *condvar.Cond) { _ = c.WaitWhileContext(context.Background(), no) }},
	}
	for _, k := range lockKinds() {
		if !k.ownerAware {
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			for _, op := range ops {
				t.Run(op.name, func(t *testing.T) {
					l, held := k.new()
					c := condvar.New(l)
					err, _ := testutil.MisusePanic(t, false, func() { op.call(c) })
					assert.ErrorIs(t, err, condvar.ErrNotOwner, "lock free")

					l.Lock()
					err, _ = testutil.MisusePanic(t, true, func() { op.call(c) })
					assert.ErrorIs(t, err, condvar.ErrNotOwner, "lock held by another goroutine")
					assert.True(t, held(), "a misuse took the lock from its holder")
					assert.Zero(t, c.Waiters())
					l.Unlock()
				})
			}
		})
	}
}

// TestDeadlineWaitNilContext: a context form given a nil context panics
// with ErrNilContext, also when the condition already holds, and the
// caller still holds the lock.
func TestDeadlineWaitNilContext(t *testing.T) {
	var nilCtx context.Context
	forEachKind(t, func(t *testing.T, k lockKind, l sync.Locker, held func() bool, c *condvar.Cond) {
		for name, call := range map[string]func(){
			"WaitUntilContext": func() { _ = c.WaitUntilContext(nilCtx, func() bool { return true }) },
			"WaitWhileContext": func() { _ = c.WaitWhileContext(nilCtx, func() bool { return false }) },
		} {
			l.Lock()
			err := testutil.MustPanicErr(t, call)
			assert.ErrorIs(t, err, condvar.ErrNilContext, name)
			assert.True(t, errors.As(err, new(*misuse.Error)), name)
			assert.Contains(t, err.Error(), "condvar: "+name+" with a nil context")
			if held != nil {
				assert.True(t, held(), "%s: the caller still holds the lock", name)
			}
			l.Unlock()
		}
	})
}

// TestDeadlineWaitHammer: consumers take items with each deadline wait
// under a limit no run reaches, producers add them with Signal: every wait
// ends with its condition true, and every item is taken once. It checks
// under -race that the predicate runs under the lock and that no wakeup is
// lost across the waits' retries.
func TestDeadlineWaitHammer(t *testing.T) {
	const consumers, items = 8, 200 // items per consumer
	forEachKind(t, func(t *testing.T, _ lockKind, l sync.Locker, _ func() bool, c *condvar.Cond) {
		queue := 0 // guarded by l
		nonEmpty := func() bool { return queue > 0 }
		empty := func() bool { return queue == 0 }
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Liveness)
		defer cancel()
		waits := []func() bool{
			func() bool { return c.WaitUntilTimeout(testutil.Liveness, nonEmpty) },
			func() bool { return c.WaitWhileTimeout(testutil.Liveness, empty) },
			func() bool { return c.WaitUntilContext(ctx, nonEmpty) == nil },
			func() bool { return c.WaitWhileContext(ctx, empty) == nil },
		}
		var wg sync.WaitGroup
		failed := make(chan int, consumers*items)
		for i := 0; i < consumers; i++ {
			wg.Add(1)
			go func(wait func() bool) {
				defer wg.Done()
				for n := 0; n < items; n++ {
					l.Lock()
					if !wait() {
						failed <- n
						l.Unlock()
						return
					}
					queue--
					l.Unlock()
				}
			}(waits[i%len(waits)])
		}
		for n := 0; n < consumers*items; n++ {
			l.Lock()
			queue++
			l.Unlock()
			c.Signal()
		}
		wg.Wait()
		close(failed)
		for n := range failed {
			t.Errorf("a wait for item %d timed out", n)
		}
		assert.Zero(t, queue)
		assert.Zero(t, c.Waiters())
	})
}

// TestDeadlineWaitUnsignalled: a condition that comes true while the
// waiter waits, announced by a Signal, ends WaitUntilTimeout with true
// before its limit; one that does not leaves WaitUntilTimeout(0) false.
func TestDeadlineWaitUnsignalled(t *testing.T) {
	forEachKind(t, func(t *testing.T, _ lockKind, l sync.Locker, _ func() bool, c *condvar.Cond) {
		ready := false // guarded by l
		res := queueWaiter(t, l, c, 1, func() bool { return c.WaitUntilTimeout(testutil.Liveness, func() bool { return ready }) })
		l.Lock()
		ready = true
		l.Unlock()
		c.Signal()
		require.True(t, testutil.Await(t, res, "waiter"))

		l.Lock()
		ready = false
		assert.False(t, c.WaitUntilTimeout(0, func() bool { return ready }))
		l.Unlock()
	})
}
