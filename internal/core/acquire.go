package core

import (
	"context"
	"time"
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
	p := newParker(w, ctx, deadline)
	var clear, set int64 // clear: flagWoken once woken; set: flagStarving once starving
	for {
		if p.armed() && clear != 0 {
			// Woken, lost the race: a cancelling callback, which cancels
			// only a queued waiter, may have run while this one was not
			// queued. If so, pass the wakeup on.
			if err := p.failed(); err != nil {
				p.finish(dt)
				l.passOn(w)
				return err
			}
		}
		l.mu.Lock()
		if l.queueOrAcquire(w, clear, set) {
			l.mu.Unlock()
			p.finish(dt)
			return nil
		}
		// A waiter that was woken and lost the race goes back to the front,
		// so barging cannot push it to the end of the line every time.
		l.enqueue(w, clear != 0)
		sema := w.sema
		w.makeChan()
		l.mu.Unlock()

		// In Cycles mode nothing records where a lock was first taken
		// (that would cost the fast path); the first Lock that has to wait
		// for it is recorded instead (enter), so that reports can say
		// where an unnamed lock is used. After the waiter has taken the
		// lock, its registration until finish can only lead a walk back
		// to the waiter itself, which is not a cycle through the walker.
		if cycle := p.enter(); cycle != nil {
			// Out of the queue before the report is made: a reporter
			// that panics or exits its goroutine must not leave this
			// waiter queued, or the lock would never wake anyone again.
			p.quit(l, dt)
			return deadlock(cycle)
		}
		if p.past() {
			p.quit(l, dt)
			return context.DeadlineExceeded
		}
		switch p.park(sema, l, dt) {
		case parkCancelled:
			p.finish(dt) // dequeued by l.cancel or failQueued: no wakeup to pass on
			return w.cancelErr()
		case parkDone:
			p.quit(l, dt)
			return ctx.Err()
		case parkExpired:
			p.quit(l, dt)
			return context.DeadlineExceeded
		}
		if w.handoff {
			p.finish(dt)
			return nil
		}
		// While woken is set no Release wakes anyone else, so the lock is
		// this waiter's to take once it is free. If it is held again (the
		// releaser barged back in), spin before queueing again, as
		// sync.Mutex's woken waiter does, rather than park at once and
		// cost the releaser another wakeup at its next Unlock (see spin).
		clear = flagWoken
		if l.tryAcquire(g, flagWoken) || spin(l, g, flagWoken) {
			p.finish(dt)
			return nil
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
