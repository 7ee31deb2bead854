package condvar

import (
	"context"
	"time"

	"github.com/locksmith-go/locksmith/internal/core"
)

// The deadline waits: the loops a port from Java, Ruby, Python or C#
// otherwise writes around WaitTimeout each time. One deadline holds for
// the whole call, however often the goroutine is woken before its
// condition holds (by a Signal meant for another condition, a Broadcast, a
// waiter's signal passed on), which a loop that restarts WaitTimeout(d)
// after each wakeup gets wrong.
//
//   - WaitDeadline is WaitTimeout with the limit as a point in time:
//     Java's awaitUntil(Date), and what a loop over Java's awaitNanos
//     computes by hand (the time remaining is time.Until(deadline)).
//   - WaitUntilTimeout and WaitWhileTimeout are WaitUntil and WaitWhile
//     with a time limit: Python's wait_for(predicate, timeout), Java's
//     "while (!ready) { if (nanos <= 0) return false; nanos =
//     c.awaitNanos(nanos); }", C#'s Monitor.Wait(o, t) in a loop, Ruby's
//     wait_while with a deadline of its own.
//   - WaitUntilContext and WaitWhileContext are the same until a context is
//     done, and so also serve a deadline shared with other work
//     (context.WithDeadline).
//
// Each predicate form checks that the caller holds the lock on entry, also
// when the condition already holds, as WaitUntil does, so that a misuse is
// caught on every run; calls the predicate with the lock held, once on
// entry and once after each wakeup, the last time after the wait that the
// time limit or the context ended, so that a condition that came true just
// then is not reported as a timeout; and returns with the lock held, its
// hold count restored.

// WaitDeadline is WaitTimeout with the time limit given as a deadline
// (Java's awaitUntil): it reports whether it was woken by Signal or
// Broadcast (true) or returned because the deadline passed (false). Either
// way the lock is held again, with its hold count restored, when it
// returns. A deadline that has passed returns false at once without
// releasing the lock, as WaitTimeout(0) does.
func (c *Cond) WaitDeadline(deadline time.Time) bool {
	return c.WaitTimeout(time.Until(deadline))
}

// WaitUntilTimeout waits until pred returns true or d has elapsed, calling
// pred with the lock held, and returns pred's last result: true if the
// condition holds, false if d elapsed first (Python's wait_for with a
// timeout). If pred is true on entry it returns true without waiting; if d
// <= 0 and pred is false, it returns false at once without releasing the
// lock. Wakeups before pred holds wait again, for what is left of d.
func (c *Cond) WaitUntilTimeout(d time.Duration, pred func() bool) bool {
	return c.waitForTimeout(d, pred, true)
}

// WaitWhileTimeout waits as long as cond returns true, for at most d,
// calling cond with the lock held, and reports whether cond returned false
// (true) or d elapsed with cond still true (false). It is
// WaitUntilTimeout with the condition negated.
func (c *Cond) WaitWhileTimeout(d time.Duration, cond func() bool) bool {
	return c.waitForTimeout(d, cond, false)
}

// WaitUntilContext waits until pred returns true or ctx is done, calling
// pred with the lock held. It returns nil if pred returned true, else
// ctx.Err(). If pred is true on entry it returns nil without waiting, even
// if ctx is done; if ctx is done and pred is false, it returns ctx.Err()
// at once without releasing the lock. A nil ctx panics with an error
// matching ErrNilContext.
func (c *Cond) WaitUntilContext(ctx context.Context, pred func() bool) error {
	return c.waitForContext(ctx, "WaitUntilContext", pred, true)
}

// WaitWhileContext waits as long as cond returns true, until ctx is done,
// calling cond with the lock held. It returns nil if cond returned false,
// else ctx.Err(). It is WaitUntilContext with the condition negated.
func (c *Cond) WaitWhileContext(ctx context.Context, cond func() bool) error {
	return c.waitForContext(ctx, "WaitWhileContext", cond, false)
}

// waitForTimeout waits, for at most d, until f returns want: the Until
// and While forms in one, without a closure to negate f. f is called on
// entry and after every wait; the loop ends with false at the first wait
// that returns false with no time left, which WaitTimeout makes at once
// without releasing the lock.
func (c *Cond) waitForTimeout(d time.Duration, f func() bool, want bool) bool {
	c.checkOwner("wait") // also when f already returns want
	start := time.Now()
	for f() != want {
		left := d - time.Since(start)
		if !c.WaitTimeout(left) && left <= 0 {
			return false
		}
	}
	return true
}

// waitForContext waits, until ctx is done, until f returns want; op names
// the caller in the nil-context panic. A wait begun with ctx done returns
// at once without releasing the lock and ends the loop.
func (c *Cond) waitForContext(ctx context.Context, op string, f func() bool, want bool) error {
	c.checkOwner("wait")
	if ctx == nil {
		panic(core.Misuse("condvar: "+op+" with a nil context", ErrNilContext))
	}
	for f() != want {
		done := ctx.Err() != nil
		if err := c.WaitContext(ctx); err != nil && done {
			return err
		}
	}
	return nil
}
