package core

import (
	"context"
	"time"

	"github.com/locksmith-go/locksmith/internal/gid"
)

// RLockSlow blocks until g has a first-time read hold. The caller has
// checked that g holds no read lock (and, unless reentrant, not the write
// lock). ctx may be nil. On failure (ctx done, or the wait would close a
// deadlock cycle) g holds nothing new.
func (l *RWLock) RLockSlow(g int64, ctx context.Context, k *Class) error {
	return l.RLockDeadline(g, ctx, time.Time{}, k)
}

// RLockDeadline is RLockSlow that also gives up at deadline, unless it is
// the zero Time, returning context.DeadlineExceeded; as with
// Lock.AcquireDeadline, the timer is made only when the reader is about
// to park, at most once per call.
func (l *RWLock) RLockDeadline(g int64, ctx context.Context, deadline time.Time, k *Class) error {
	if l.enterRead(g) {
		return nil
	}
	return l.rlockWait(g, ctx, deadline, k)
}

// rlockWait is RLockSlow once a first try has failed. It is a function of
// its own so that the first try stays small and sets up no wait: a reader
// whose home slot another reader holds, and that finds a free slot at
// once, must not allocate (BenchmarkRWMutexReadPairWithReaders in
// mutex/rwbench_test.go shows its allocs/op and time).
func (l *RWLock) rlockWait(g int64, ctx context.Context, deadline time.Time, k *Class) error {
	var timer deadlineTimer
	dt := &timer
	p := newParker(nil, ctx, deadline) // the waiter is made at the first park
	q := (*readQueue)(l)
	for first := true; ; first = false {
		if !first && l.enterRead(g) {
			p.finish(dt)
			return nil
		}
		if spinUntil(func() bool { o := l.w.Owner(); return o == 0 || o == g }) && l.enterRead(g) {
			p.finish(dt)
			return nil
		}
		if p.w == nil {
			w := newWaiter(g, &l.w, k)
			w.rw, w.awaits = l, waitRead
			p.w = w
		}
		w := p.w
		l.rmu.Lock()
		l.rs.Or(rsReadersWaiting)
		// The handshake with unlockWrite: it releases the writer lock and
		// then loads rs, this sets readersWaiting and then loads the owner.
		o := l.w.Owner()
		if o == 0 || o == g {
			if l.rq.head == nil {
				l.rs.And(^int64(rsReadersWaiting))
			}
			l.rmu.Unlock()
			continue
		}
		// A queued reader is woken by the writer it saw (o, when it
		// unlocks) or by an earlier writer finishing its Unlock (see
		// takeReaders); those skip a durable reader of another domain,
		// which o then wakes. So it may park durably if o is of its bubble
		// (or has exited holding the writer lock: see holderIn).
		durable := w.dom.Bubble() && holderIn(o, w.dom, l.w.heldBy)
		if durable {
			// For takeReaders, which strands w if o wakes it from
			// another domain, and for the message that says so.
			w.durHolder, w.durState = o, l.w.state.Load()
			w.durHolderDom, _ = cachedDomain(o)
		}
		l.renqueue(w, durable)
		sema := w.sema
		w.makeChan()
		l.rmu.Unlock()
		if cycle := p.enter(); cycle != nil {
			// Out of the queue before the report is made, as in
			// Lock.acquireDeadline: a reporter may panic.
			p.quit(q, dt)
			return deadlock(cycle)
		}
		if p.past() {
			p.quit(q, dt)
			return context.DeadlineExceeded
		}
		// A callback registered in an earlier round may have run while w
		// was not queued: hence the look at ctx (and at the deadline,
		// above).
		if sema {
			if err := p.ctxErr(); err != nil {
				p.quit(q, dt)
				return err
			}
		}
		switch p.park(sema, q, dt) {
		case parkCancelled:
			p.finish(dt) // dequeued by the callback or failQueued: nothing handed over
			return w.cancelErr()
		case parkDone:
			p.quit(q, dt)
			return ctx.Err()
		case parkExpired:
			p.quit(q, dt)
			return context.DeadlineExceeded
		}
		if w.handoff {
			p.finish(dt)
			return nil
		}
	}
}

// readQueue is an RWLock's reader queue as a parkQueue.
type readQueue RWLock

// cancel dequeues w if it is still queued (see Lock.cancel).
func (q *readQueue) cancel(w *waiter, err error) {
	l := (*RWLock)(q)
	w.cancelQueued(&l.rmu, l.runlink, err)
}

func (q *readQueue) abandon(w *waiter) { (*RWLock)(q).abandonRead(w) }

// abandonRead takes a cancelled or refused reader out of the queue. If a
// writer already dequeued it, the token is on its way: a read hold handed
// over with it is released again, so that it is passed on, not lost.
func (l *RWLock) abandonRead(w *waiter) {
	if testHookAbandonRead != nil {
		testHookAbandonRead(l)
	}
	l.rmu.Lock()
	if w.inq {
		l.runlink(w)
		l.rmu.Unlock()
		return
	}
	sema := w.sema
	l.rmu.Unlock()
	w.awaitToken(sema) // posted by the writer that dequeued w, or by the cancelling callback
	if w.handoff {
		w.handoff = false
		l.RUnlock(w.g, true)
	}
}

// testHookAbandonRead, if set (by tests), runs in abandonRead before it
// takes rmu.
var testHookAbandonRead func(*RWLock)

// renqueue appends w to the reader queue, parking durably if durable;
// rmu is held.
func (l *RWLock) renqueue(w *waiter, durable bool) {
	w.inq = true
	w.handoff = false
	w.setPark(durable)
	if durable {
		l.rdurable++
	}
	l.rq.pushBack(w)
}

func (l *RWLock) runlink(w *waiter) {
	l.rq.unlink(w)
	w.inq = false
	if w.durable {
		l.rdurable--
	}
	if l.rq.head == nil {
		l.rs.And(^int64(rsReadersWaiting))
	}
}

// takeReaders detaches from the reader queue, in order, the readers the
// calling writer may wake; rmu is held. That is all of them, except
// readers parked durably in a bubble other than the caller's domain. Such
// a reader saw a writer of its bubble own the lock when it queued
// (RLockSlow), the durHolder it parked behind, which wakes it:
//   - If that writer is not the caller, it has released the writer lock
//     since (the caller owns or owned it after) but not yet taken the
//     readers, the last step of its Unlock; the reader is left queued.
//   - If it is the caller, the caller has left the reader's bubble since:
//     it held the write lock while it ran synctest.Test, the bubble
//     deadlocked on it, and Test has returned. The bubble is over and the
//     reader stays blocked for good, as a Lock's waiter does in that case
//     (see Lock.wakeable). It comes off the queue, so that readersWaiting
//     clears and later RLocks and Unlocks take their fast paths again,
//     and stranded says why, for the caller to report with strand once
//     the lock is consistent.
func (l *RWLock) takeReaders() (h *waiter, stranded string) {
	var d Domain // the caller's, looked up only if a durable reader is queued
	if l.rdurable > 0 {
		d = CurDomain()
	}
	var t *waiter
	var g int64 // the caller's ID, looked up at the first foreign durable reader
	for w := l.rq.head; w != nil; {
		next := w.next
		switch {
		case !w.durable || w.dom == d:
			l.runlink(w)
			if t == nil {
				h = w
			} else {
				t.next = w
			}
			t = w
		default:
			if g == 0 {
				g = gid.Get()
			}
			if w.durHolder == g {
				msg, _ := w.foreignWaker()
				l.runlink(w)
				stranded = joinStranded(stranded, msg)
			}
		}
		w = next
	}
	return h, stranded
}

// wakeList wakes each reader of a list detached by takeReaders.
func wakeList(h *waiter) {
	for w := h; w != nil; {
		next := w.next
		w.next = nil
		sema := w.sema // set by w under rmu before it queued; w changes it only after this wakeup
		w.checkWaker()
		w.wake(sema)
		w = next
	}
}

// WakeQueuedReaders wakes, to retry, the readers queued behind a writer
// that has released the writer lock without admitting them; the assembly
// fast path of Unlock calls it when it sees readersWaiting after its
// release.
func (l *RWLock) WakeQueuedReaders() {
	l.rmu.Lock()
	h, stranded := l.takeReaders()
	l.rmu.Unlock()
	wakeList(h)
	strand(stranded) // last: see takeReaders
}
