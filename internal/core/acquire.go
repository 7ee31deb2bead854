package core

import (
	"context"
	"time"

	"github.com/locksmith-go/locksmith/internal/fpstack"
)

// Acquire blocks until g holds the lock. ctx may be nil for a wait that
// cannot be cancelled. On failure (ctx done, or the wait would close a
// deadlock cycle) it returns the error and g does not hold the lock.
// The caller has already tried the fast path and checked for re-entry.
func (l *Lock) Acquire(g int64, ctx context.Context, k *Class) error {
	return l.AcquireDeadline(g, ctx, time.Time{}, k)
}

// AcquireDeadline is Acquire that also gives up at deadline, unless it is
// the zero Time, returning context.DeadlineExceeded. The timer is made
// only when the goroutine is about to park, after spinning, and at most
// once per call: a lock taken by spinning costs no timer.
//
// Rejected alternative: the caller wrapping a context.WithDeadline and
// calling Acquire. That allocates a context, its done channel and a timer
// before spinning, so every contended call pays for them, also the many
// that spinning serves.
func (l *Lock) AcquireDeadline(g int64, ctx context.Context, deadline time.Time, k *Class) error {
	var dt deadlineTimer
	return l.acquireDeadline(g, ctx, deadline, k, &dt)
}

// acquireDeadline is AcquireDeadline with the timer of a park on ch in
// *dt, which a later wait of the same call may restart (RWLock.LockDeadline);
// it is stopped when acquireDeadline returns.
func (l *Lock) acquireDeadline(g int64, ctx context.Context, deadline time.Time, k *Class, dt *deadlineTimer) error {
	if spin(l, g, 0) {
		return nil
	}
	w := newWaiter(g, l, k)
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
	}
	var expired <-chan time.Time // armed at the first park on ch of a wait with a deadline
	// A registered waiter is visible to other goroutines' cycle walks. It
	// unregisters before it abandons the wait, so that no walk sees it
	// waiting once it has decided to return: a cycle through it would no
	// longer be real. After it has taken the lock, the stale entry until
	// unregister can only lead a walk back to the waiter itself, which is
	// not a cycle through the walker.
	registered := false
	// A park on sem cannot select on done or expired: callbacks cancel it
	// instead (l.cancel); stop and dstop unregister them.
	var stop, dstop func() bool
	finish := func() {
		if registered {
			unregister(w)
		}
		dt.stop()
		if stop != nil {
			stop()
		}
		if dstop != nil {
			dstop()
		}
	}
	acquired := func() error {
		finish()
		return nil
	}
	leave := func(err error) error {
		finish()
		l.abandon(w)
		return err
	}
	var clear, set int64 // clear: flagWoken once woken; set: flagStarving once starving
	for {
		if (stop != nil || dstop != nil) && clear != 0 {
			// Woken, lost the race: a cancelling callback, which cancels
			// only a queued waiter, may have run while this one was not
			// queued. If so, pass the wakeup on.
			var err error
			switch {
			case ctx != nil && ctx.Err() != nil:
				err = ctx.Err()
			case !deadline.IsZero() && time.Until(deadline) <= 0:
				err = context.DeadlineExceeded
			}
			if err != nil {
				finish()
				l.passOn(w)
				return err
			}
		}
		l.mu.Lock()
		if l.queueOrAcquire(w, clear, set) {
			l.mu.Unlock()
			return acquired()
		}
		// A waiter that was woken and lost the race goes back to the front,
		// so barging cannot push it to the end of the line every time.
		l.enqueue(w, clear != 0)
		sema := w.sema
		w.makeChan()
		l.mu.Unlock()

		// Registered whatever the mode: a goroutine that parks while
		// detection is Off may still be parked when Cycles mode is turned
		// on, and must then be visible to the walks of goroutines that
		// park later, or a cycle through it would go unseen. In Off mode
		// that costs a shard's mutex and a map write on each side of the
		// park, next to the park itself; nothing else (no site, no
		// watchdog, no walk).
		//
		// Rejected alternative: registering only when detection is on,
		// and re-checking the mode when woken. A goroutine in a deadlock
		// is never woken, so it would stay invisible for good.
		if !registered {
			register(w)
			registered = true
			if Mode() != ModeOff {
				// In Cycles mode nothing records where a lock was first
				// taken (that would cost the fast path); the first Lock
				// that has to wait for it is recorded instead, so that
				// reports can say where an unnamed lock is used.
				if m := l.Meta(k); m.waitSite.Load() == nil {
					// 2: acquireDeadline and its caller.
					rec := make([]uintptr, siteWords(2))
					rec = rec[:fpstack.Record(2, rec)]
					m.waitSite.CompareAndSwap(nil, &rec)
				}
				if engine != nil {
					engine.Parked()
				}
			}
		}
		if Mode() != ModeOff {
			if cycle := checkCycle(w); cycle != nil {
				// Out of the queue before the report is made: a reporter
				// that panics or exits its goroutine must not leave this
				// waiter queued, or the lock would never wake anyone again.
				leave(nil)
				return deadlock(cycle)
			}
		}
		if !deadline.IsZero() && time.Until(deadline) <= 0 {
			return leave(context.DeadlineExceeded)
		}
		if sema {
			// The callbacks are registered after the waiter is queued: one
			// whose context is already done runs at once and finds it.
			if ctx != nil && stop == nil {
				stop = context.AfterFunc(ctx, func() { l.cancel(w, ctx.Err()) })
			}
			if !deadline.IsZero() && dstop == nil {
				dstop = time.AfterFunc(time.Until(deadline), func() { l.cancel(w, context.DeadlineExceeded) }).Stop
			}
			w.sem.Lock()
			if w.cancelled != nil {
				finish() // dequeued by l.cancel: no wakeup to pass on
				return w.cancelled
			}
		} else {
			if !deadline.IsZero() && expired == nil {
				expired = dt.arm(deadline)
			}
			select {
			case <-w.ch:
			case <-done:
				return leave(ctx.Err())
			case <-expired:
				return leave(context.DeadlineExceeded)
			}
		}
		if w.handoff {
			return acquired()
		}
		// While woken is set no Release wakes anyone else, so the lock is
		// this waiter's to take once it is free. If it is held again (the
		// releaser barged back in), spin before queueing again, as
		// sync.Mutex's woken waiter does, rather than park at once and
		// cost the releaser another wakeup at its next Unlock (see spin).
		clear = flagWoken
		if l.tryAcquire(g, flagWoken) || spin(l, g, flagWoken) {
			return acquired()
		}
		if nanotime()-w.start > starvationThreshold {
			set = flagStarving
		}
	}
}

// queueOrAcquire, under mu, either takes the free lock or marks the queue
// waiting (and, with set, starving), in one CompareAndSwap, clearing the
// flags in clear either way. When it queues, it decides how w parks this
// time: durably (a waiter in a bubble whose wakers are all in its bubble,
// see durableOK), on sem (any other waiter in a bubble), or on its own
// channel (a goroutine outside bubbles).
func (l *Lock) queueOrAcquire(w *waiter, clear, set int64) bool {
	var d Domain
	for {
		s := l.state.Load()
		if s>>ownerShift == 0 && (s&flagDurable == 0 || l.mayTake(&d)) {
			if l.state.CompareAndSwap(s, s&^clear|w.g<<ownerShift) {
				return true
			}
			continue
		}
		n := s&^clear | flagWaiting | set
		durable := w.dom.Bubble() && l.durableOK(w, s)
		if durable && s&flagDurable == 0 {
			l.durDom.Store(uint64(w.dom)) // before the flag that publishes it
			n |= flagDurable
		}
		if l.state.CompareAndSwap(s, n) {
			w.setPark(durable)
			if durable {
				l.ndurable++
				w.durHolder, w.durState = s>>ownerShift, s
				w.durHolderDom, _ = cachedDomain(w.durHolder)
			}
			return false
		}
	}
}

// testHookAbandon, if set (by tests), runs in abandon before it takes mu.
var testHookAbandon func(*Lock)

// abandon takes w out of the wait, for a cancelled or refused waiter. If a
// token was already on its way to w, w is the woken waiter and owes the
// lock a wakeup (passOn).
func (l *Lock) abandon(w *waiter) {
	if testHookAbandon != nil {
		testHookAbandon(l)
	}
	l.mu.Lock()
	if w.inq {
		l.remove(w)
		l.mu.Unlock()
		return
	}
	sema := w.sema
	l.mu.Unlock()
	w.awaitToken(sema) // posted by wakeOne, handOff or cancel right after it dequeued w
	if w.cancelled == nil {
		l.passOn(w)
	}
}

// passOn hands on the wakeup that w, dequeued by wakeOne or handOff and
// given its token, does not use: if the lock is free with others waiting,
// it wakes the next one in its place (keeping woken set); otherwise it
// clears woken, and the holder's Release will wake. This is
// x/sync/semaphore's rule: a grant that arrives after cancellation is
// handed on, never dropped.
func (l *Lock) passOn(w *waiter) {
	if w.handoff {
		// Handed the lock after deciding to leave: pass it on. The writer
		// lock of an RWLock is released as its Unlock does, so that the
		// readers that queued behind w as the writer are woken too.
		if rw := RWOf(l, w.class); rw != nil {
			rw.Unlock(w.g)
			return
		}
		l.releaseSlow(w.g)
		return
	}
	for {
		s := l.state.Load()
		if s>>ownerShift == 0 && s&flagWaiting != 0 {
			strand(l.wakeOne())
			return
		}
		if l.state.CompareAndSwap(s, s&^flagWoken) {
			return
		}
	}
}
