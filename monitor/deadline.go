package monitor

import (
	"context"
	"time"
)

// The predicate and deadline waits on m's implicit condition, for ports of
// the loops Java writes around Object.wait(ms) and C# around
// Monitor.Wait(o, t): each is condvar.Cond's method of the same name (see
// condvar.Cond.WaitUntilTimeout), and each panics with ErrNotOwner if the
// caller does not hold m, also when the condition already holds.

// WaitUntil waits on m's implicit condition until pred returns true,
// calling it with m held: C#'s "while (!ready) Monitor.Wait(o);". See
// condvar.Cond.WaitUntil.
func (m *Monitor) WaitUntil(pred func() bool) { m.implicit("wait").WaitUntil(pred) }

// WaitWhile waits on m's implicit condition as long as cond returns true,
// calling it with m held. See condvar.Cond.WaitWhile.
func (m *Monitor) WaitWhile(cond func() bool) { m.implicit("wait").WaitWhile(cond) }

// WaitDeadline is WaitTimeout with the time limit given as a deadline: it
// reports whether it was notified (true) or the deadline passed (false).
// See condvar.Cond.WaitDeadline.
func (m *Monitor) WaitDeadline(deadline time.Time) bool {
	return m.implicit("wait").WaitDeadline(deadline)
}

// WaitUntilTimeout waits on m's implicit condition until pred returns true
// or d has elapsed, calling pred with m held, and returns pred's last
// result: C#'s Monitor.Wait(o, t) in a loop with one deadline, Java's
// wait(ms) loop. See condvar.Cond.WaitUntilTimeout.
func (m *Monitor) WaitUntilTimeout(d time.Duration, pred func() bool) bool {
	return m.implicit("wait").WaitUntilTimeout(d, pred)
}

// WaitWhileTimeout waits on m's implicit condition as long as cond returns
// true, for at most d, and reports whether cond returned false (true) or
// d elapsed first (false). See condvar.Cond.WaitWhileTimeout.
func (m *Monitor) WaitWhileTimeout(d time.Duration, cond func() bool) bool {
	return m.implicit("wait").WaitWhileTimeout(d, cond)
}

// WaitUntilContext waits on m's implicit condition until pred returns true
// or ctx is done; it returns nil if pred returned true, else ctx.Err(). It
// panics with an error matching ErrNilContext if ctx is nil. See
// condvar.Cond.WaitUntilContext.
func (m *Monitor) WaitUntilContext(ctx context.Context, pred func() bool) error {
	return m.implicit("wait").WaitUntilContext(ctx, pred)
}

// WaitWhileContext waits on m's implicit condition as long as cond returns
// true, until ctx is done; it returns nil if cond returned false, else
// ctx.Err(). It panics with an error matching ErrNilContext if ctx is nil.
// See condvar.Cond.WaitWhileContext.
func (m *Monitor) WaitWhileContext(ctx context.Context, cond func() bool) error {
	return m.implicit("wait").WaitWhileContext(ctx, cond)
}
