package core

import (
	"context"
	"time"

	"github.com/locksmith-go/locksmith/internal/fpstack"
)

// The park protocol, shared by every wait of the package: a Lock's
// waiter (Mutex, Monitor, an RWLock's writers on the writer lock,
// acquireDeadline), a first-time reader (rlockWait) and a writer waiting
// for the readers to leave (drain). Each wait keeps its own loop, which
// decides when to queue, how to retry and what counts as acquired; a
// parker owns the steps that must be the same for all:
//
//   - registration, so that cycle walks see the waiter, and its removal,
//     always before the waiter abandons the wait (finish, quit): a walk
//     must never see a waiter that has decided to return, or it would
//     find cycles through it that are no longer real;
//   - the wait site of an unnamed lock and engine.Parked (noteSite), and
//     the cycle check (enter);
//   - the deadline: one timer per call (a deadlineTimer, which the waits
//     of RWLock.LockDeadline share) for a park on a channel, and for a
//     park on a semaphore the context and deadline callbacks
//     (armCallbacks), made at the first such park and stopped by finish;
//   - the park itself, on the waiter's channel or semaphore (park).
//
// What differs between the queues is a parkQueue: how a callback cancels
// a parked waiter and how a waiter that gives up leaves the queue.
//
// A parker lives in its wait's frame and is never copied or shared; its
// callbacks capture the waiter, the context and the queue, never the
// parker, so that it stays on the stack and a wait that does not park
// allocates nothing for it. The call's deadlineTimer is passed to the
// steps that use it (park, finish, quit), not kept in the parker: the
// compiler tracks a struct's pointers as one, and the waiter in it
// escapes, so a timer kept beside it would be moved to the heap in every
// call, also those that spinning serves.
type parker struct {
	w        *waiter // nil until the wait first needs one (rlockWait)
	ctx      context.Context
	ctxDone  <-chan struct{}  // ctx.Done(), or nil
	deadline time.Time        // zero: none
	expired  <-chan time.Time // the call's timer's channel, armed at the first park on ch

	registered bool
	// cstop and dstop unregister the context and deadline callbacks of a
	// park on sem.
	cstop, dstop func() bool
}

// A parkQueue is what a parker needs to know about the queue its waiter
// parks in.
type parkQueue interface {
	// cancel is the context or deadline callback of a waiter parked on
	// sem, err saying which: it ends the park, dequeuing the waiter if
	// that is how the queue works.
	cancel(w *waiter, err error)
	// abandon takes w, which gives up (cancelled, expired or refused as
	// closing a deadlock cycle), out of the wait, passing on whatever was
	// handed to it meanwhile.
	abandon(w *waiter)
}

// Results of parker.park.
const (
	parkWoken     = iota // a token: retry, or (w.handoff) the lock is w's
	parkCancelled        // a callback (or the exited-holder check) dequeued w, with w.cancelled
	parkDone             // ctx is done (a park on ch)
	parkExpired          // the deadline passed (a park on ch)
)

// newParker returns the parker of a wait of w (nil: set p.w before the
// first enter) that gives up when ctx (nil: never) is done or at deadline
// (zero: never).
func newParker(w *waiter, ctx context.Context, deadline time.Time) parker {
	p := parker{w: w, ctx: ctx, deadline: deadline}
	if ctx != nil {
		p.ctxDone = ctx.Done()
	}
	return p
}

// enter runs, once the waiter is queued and before it parks, the checks
// of every park: at the first, it registers the waiter and, with
// detection on, notes the wait site; then, with detection on, it returns
// the deadlock cycle the wait would close, or nil.
//
// Registered whatever the mode: a goroutine that parks while detection is
// Off may still be parked when Cycles mode is turned on, and must then be
// visible to the walks of goroutines that park later, or a cycle through
// it would go unseen. In Off mode that costs a shard's mutex and a map
// write on each side of the park, next to the park itself, and the
// lock's Meta at its first park, which the registry names it by (see
// waits.go); nothing else (no site, no watchdog, no walk).
//
// Rejected alternative: registering only when detection is on, and
// re-checking the mode when woken. A goroutine in a deadlock is never
// woken, so it would stay invisible for good.
func (p *parker) enter() *Cycle {
	if !p.registered {
		register(p.w)
		p.registered = true
		if Mode() != ModeOff {
			noteSite(p.w.lock, p.w.class)
			if p.w.dom == DomOutside {
				armExited() // the exited-holder check (exited.go)
			}
		}
	}
	if Mode() != ModeOff {
		if c := checkCycle(p.w); c != nil {
			c.BacksOff = p.ctx != nil || !p.deadline.IsZero()
			return c
		}
	}
	return nil
}

// past reports whether the deadline, if any, has passed.
func (p *parker) past() bool { return !p.deadline.IsZero() && time.Until(p.deadline) <= 0 }

// ctxErr returns ctx's error, or nil.
func (p *parker) ctxErr() error {
	if p.ctx != nil {
		return p.ctx.Err()
	}
	return nil
}

// failed returns why the wait should end unfinished, ctx done or the
// deadline past, or nil.
func (p *parker) failed() error {
	switch {
	case p.ctx != nil && p.ctx.Err() != nil:
		return p.ctx.Err()
	case p.past():
		return context.DeadlineExceeded
	}
	return nil
}

// armed reports whether the callbacks of a park on sem are registered.
func (p *parker) armed() bool { return p.cstop != nil || p.dstop != nil }

// armCallbacks registers, unless they are, the context and deadline
// callbacks of a park on sem, which cannot select on ctx.Done() or a
// timer: they call q.cancel instead. The caller has queued the waiter, so
// that a callback whose context is already done runs at once and finds
// it.
func (p *parker) armCallbacks(q parkQueue) {
	w, ctx := p.w, p.ctx // the callbacks capture these, not p
	if ctx != nil && p.cstop == nil {
		p.cstop = context.AfterFunc(ctx, func() { q.cancel(w, ctx.Err()) })
	}
	if !p.deadline.IsZero() && p.dstop == nil {
		p.dstop = time.AfterFunc(time.Until(p.deadline), func() { q.cancel(w, context.DeadlineExceeded) }).Stop
	}
}

// park blocks until the waiter's token arrives, on sem if sema (with the
// callbacks armed) or on ch (until ctx is done or the deadline passes,
// on the call's one timer, *dt), and returns how it ended (parkWoken, ...).
func (p *parker) park(sema bool, q parkQueue, dt *deadlineTimer) int {
	w := p.w
	if sema {
		p.armCallbacks(q)
		w.sem.Lock()
		// A token posted by post (a draining writer's) is taken: see post.
		w.posted.Store(false)
		if w.cancelled != nil {
			return parkCancelled
		}
		return parkWoken
	}
	if !p.deadline.IsZero() && p.expired == nil {
		p.expired = dt.arm(p.deadline)
	}
	select {
	case <-w.ch:
		if w.cancelled != nil { // dequeued by the exited-holder check
			return parkCancelled
		}
		return parkWoken
	case <-p.ctxDone:
		return parkDone
	case <-p.expired:
		return parkExpired
	}
}

// finish ends the wait's part in the protocol, whether the wait has
// succeeded or gives up: it unregisters the waiter, stops the callbacks
// and the call's timer, *dt.
func (p *parker) finish(dt *deadlineTimer) {
	if p.registered {
		unregister(p.w)
		p.registered = false
	}
	if p.cstop != nil {
		p.cstop()
	}
	if p.dstop != nil {
		p.dstop()
	}
	dt.stop()
}

// quit is finish for a waiter that gives up while queued, or dequeued
// with its token on the way: unregistered first, it then leaves q
// (q.abandon).
func (p *parker) quit(q parkQueue, dt *deadlineTimer) {
	p.finish(dt)
	q.abandon(p.w)
}

// noteSite records, for reports, the first wait on an unnamed lock, and
// tells the engine that a goroutine parks.
func noteSite(l *Lock, k *Class) {
	if m := l.Meta(k); m.waitSite.Load() == nil {
		// 4: noteSite, parker.enter, the wait (acquireDeadline, rlockWait
		// or drain) and its caller.
		rec := make([]uintptr, siteWords(4))
		rec = rec[:fpstack.Record(4, rec)]
		m.waitSite.CompareAndSwap(nil, &rec)
	}
	if engine != nil {
		engine.Parked()
	}
}
