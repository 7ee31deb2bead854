//go:build go1.25

// testing/synctest.Test is Go 1.25; the module supports older Go, whose
// toolchain skips this file. The bubble's fake clock makes every time
// below exact.

package condvar_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/condvar"
)

// deadlineWaits are the predicate waits with a time limit, each run with
// pred as its condition (WaitWhile* with the condition negated) and a
// limit of d from now; ok is true if the wait ended with pred true.
var deadlineWaits = []struct {
	name string
	wait func(c *condvar.Cond, d time.Duration, pred func() bool) (ok bool, err error)
}{
	{"WaitUntilTimeout", func(c *condvar.Cond, d time.Duration, pred func() bool) (bool, error) {
		return c.WaitUntilTimeout(d, pred), nil
	}},
	{"WaitWhileTimeout", func(c *condvar.Cond, d time.Duration, pred func() bool) (bool, error) {
		return c.WaitWhileTimeout(d, func() bool { return !pred() }), nil
	}},
	{"WaitUntilContext", func(c *condvar.Cond, d time.Duration, pred func() bool) (bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		err := c.WaitUntilContext(ctx, pred)
		return err == nil, err
	}},
	{"WaitWhileContext", func(c *condvar.Cond, d time.Duration, pred func() bool) (bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		err := c.WaitWhileContext(ctx, func() bool { return !pred() })
		return err == nil, err
	}},
}

// forEachDeadlineWait runs f in a bubble for every deadline wait and lock
// kind, with a fresh lock and Cond made in the bubble.
func forEachDeadlineWait(t *testing.T, f func(t *testing.T, k lockKind, l sync.Locker, c *condvar.Cond,
	wait func(c *condvar.Cond, d time.Duration, pred func() bool) (bool, error))) {
	for _, w := range deadlineWaits {
		t.Run(w.name, func(t *testing.T) {
			for _, k := range lockKinds() {
				t.Run(k.name, func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						l, _ := k.new()
						f(t, k, l, condvar.New(l), w.wait)
					})
				})
			}
		})
	}
}

// Wakeups before the condition holds (Signals meant for another
// condition) do not restart the time limit: the wait times out at the
// deadline set on entry, calling the predicate once on entry and once
// after each wakeup, the timed-out one included.
func TestSynctestDeadlineWaitKeepsOneDeadline(t *testing.T) {
	forEachDeadlineWait(t, func(t *testing.T, _ lockKind, l sync.Locker, c *condvar.Cond,
		wait func(*condvar.Cond, time.Duration, func() bool) (bool, error)) {
		calls := 0 // guarded by l
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 3; i++ {
				time.Sleep(15 * time.Minute) // bubble time: the fake clock
				l.Lock()
				c.Signal() // not the condition: the waiter waits on
				l.Unlock()
			}
		}()
		start := time.Now()
		l.Lock()
		ok, err := wait(c, time.Hour, func() bool { calls++; return false })
		elapsed := time.Since(start)
		got := calls
		l.Unlock()
		wg.Wait()
		assert.False(t, ok)
		if err != nil {
			assert.ErrorIs(t, err, context.DeadlineExceeded)
		}
		assert.Equal(t, time.Hour, elapsed, "the deadline is an hour from entry, whatever the wakeups")
		assert.Equal(t, 5, got, "on entry, after each of three signals, after the timeout")
		assert.Zero(t, c.Waiters())
	})
}

// The condition coming true (with a Signal) ends the wait then, with true.
func TestSynctestDeadlineWaitConditionComesTrue(t *testing.T) {
	forEachDeadlineWait(t, func(t *testing.T, _ lockKind, l sync.Locker, c *condvar.Cond,
		wait func(*condvar.Cond, time.Duration, func() bool) (bool, error)) {
		ready := false // guarded by l
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(10 * time.Minute)
			l.Lock()
			c.Signal() // a wakeup before the condition holds
			l.Unlock()
			time.Sleep(10 * time.Minute)
			l.Lock()
			ready = true
			c.Signal()
			l.Unlock()
		}()
		start := time.Now()
		l.Lock()
		ok, err := wait(c, time.Hour, func() bool { return ready })
		elapsed := time.Since(start)
		l.Unlock()
		wg.Wait()
		assert.True(t, ok)
		assert.NoError(t, err)
		assert.Equal(t, 20*time.Minute, elapsed)
	})
}

// A condition that came true without a Signal is seen after the timed-out
// wait: the wait reports the condition, not the timeout.
func TestSynctestDeadlineWaitPredicateAfterTimeout(t *testing.T) {
	forEachDeadlineWait(t, func(t *testing.T, _ lockKind, l sync.Locker, c *condvar.Cond,
		wait func(*condvar.Cond, time.Duration, func() bool) (bool, error)) {
		ready := false // guarded by l
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(30 * time.Minute)
			l.Lock()
			ready = true // and no Signal
			l.Unlock()
		}()
		start := time.Now()
		l.Lock()
		ok, err := wait(c, time.Hour, func() bool { return ready })
		elapsed := time.Since(start)
		l.Unlock()
		wg.Wait()
		assert.True(t, ok, "the condition holds when the time is up")
		assert.NoError(t, err)
		assert.Equal(t, time.Hour, elapsed)
	})
}

// A condition true on entry returns at once, without waiting or releasing
// the lock; so does a false one with no time left, reporting the timeout.
// The lock stays held throughout: a goroutine queued on it does not get
// it in between. (A goroutine blocked on a sync.Mutex is not durably
// blocked, so synctest.Wait cannot wait for it to queue: that kind runs
// without it.)
func TestSynctestDeadlineWaitReturnsAtOnce(t *testing.T) {
	forEachDeadlineWait(t, func(t *testing.T, k lockKind, l sync.Locker, c *condvar.Cond,
		wait func(*condvar.Cond, time.Duration, func() bool) (bool, error)) {
		l.Lock()
		got := false // set by the goroutine once it has the lock
		var wg sync.WaitGroup
		if k.ownerAware {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l.Lock()
				got = true
				l.Unlock()
			}()
			synctest.Wait() // the goroutine is queued on l
		}

		for _, tc := range []struct {
			name string
			d    time.Duration
			pred bool
		}{
			{"true on entry", time.Hour, true},
			{"true on entry, no time", 0, true},
			{"false, no time", 0, false},
			{"false, time past", -time.Hour, false},
		} {
			start := time.Now()
			calls := 0
			ok, err := wait(c, tc.d, func() bool { calls++; return tc.pred })
			synctest.Wait()
			assert.Equal(t, tc.pred, ok, tc.name)
			if tc.pred {
				assert.NoError(t, err, tc.name)
			} else if err != nil {
				assert.ErrorIs(t, err, context.DeadlineExceeded, tc.name)
			}
			assert.Equal(t, 1, calls, "%s: the predicate once", tc.name)
			assert.Zero(t, time.Since(start), tc.name)
			assert.False(t, got, "%s: the lock was released", tc.name)
		}
		l.Unlock()
		wg.Wait()
		assert.Equal(t, k.ownerAware, got)
	})
}

// WaitDeadline times out at the deadline, returns true when signalled
// first, and false at once for a deadline that has passed.
func TestSynctestWaitDeadline(t *testing.T) {
	for _, k := range lockKinds() {
		t.Run(k.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l, _ := k.new()
				c := condvar.New(l)
				start := time.Now()
				l.Lock()
				assert.False(t, c.WaitDeadline(start.Add(-time.Second)), "a deadline in the past")
				assert.Zero(t, time.Since(start))
				assert.False(t, c.WaitDeadline(start.Add(time.Hour)))
				assert.Equal(t, time.Hour, time.Since(start))
				l.Unlock()

				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					time.Sleep(time.Minute)
					l.Lock()
					c.Signal()
					l.Unlock()
				}()
				l.Lock()
				assert.True(t, c.WaitDeadline(time.Now().Add(time.Hour)))
				assert.Equal(t, time.Hour+time.Minute, time.Since(start))
				l.Unlock()
				wg.Wait()
			})
		})
	}
}

// A cancelled context ends a predicate wait with context.Canceled, and the
// lock is held again, as after a timeout.
func TestSynctestDeadlineWaitContextCancelled(t *testing.T) {
	for _, k := range lockKinds() {
		t.Run(k.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l, held := k.new()
				c := condvar.New(l)
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(time.Minute, cancel)
				l.Lock()
				err := c.WaitUntilContext(ctx, func() bool { return false })
				require.ErrorIs(t, err, context.Canceled)
				if held != nil {
					assert.True(t, held(), "the lock is held again")
				}
				l.Unlock()
			})
		})
	}
}
