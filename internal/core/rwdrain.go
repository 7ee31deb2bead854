package core

import (
	"context"
	"fmt"
	"time"

	"github.com/locksmith-go/locksmith/internal/gid"
)

// WakeDrainer wakes the writer waiting for readers to leave, if any, after
// the caller released its read hold (see wakeDrainer for when it panics).
func (l *RWLock) WakeDrainer() { strand(l.wakeDrainer(true)) }

// wakeDrainer wakes the draining writer if the last reader has gone. A
// reader that leaves while others remain does not wake it: the last one
// to leave (each looks after its own store, and the stores are totally
// ordered) sees the slots empty and does. A writer parked durably in a
// bubble is woken only by goroutines of its bubble; see drainPark for why one
// of them always does.
//
// But for one case, as for a Mutex (see wakeable): a goroutine outside any
// bubble that holds a read lock while it runs synctest.Test counts, for
// the runtime, as a goroutine of the bubble until Test returns, so a
// writer of the bubble that waits for it to leave parks durably, and Test
// reports the deadlock. When that reader then releases its hold (released),
// the bubble is over: the writer, which holds the write lock, stays blocked
// for good, and so does the lock. The reader's release returns the
// message that says so, for strand. It cannot be another case: a reader
// that holds the lock while a writer drains took it before the writer
// decided, as a goroutine of the writer's bubble, and only the caller of
// synctest.Test passes for one and then leaves it. A reader that backs out
// on seeing the writer (not released) has held nothing the writer waited
// for; if it finds no reader left, the last reader of the bubble woke the
// writer.
func (l *RWLock) wakeDrainer(released bool) (stranded string) {
	d := l.drainer.Load()
	if d == nil {
		return ""
	}
	switch d.pmode.Load() {
	case parkChan:
		if l.noReaders() {
			d.post(false)
		}
	case parkSema:
		if l.noReaders() {
			d.post(true)
		}
	case parkDurable:
		if cd := CurDomain(); cd != d.dom {
			// The runtime would kill the program.
			if released && l.noReaders() {
				g := gid.Get()
				return fmt.Sprintf("locksmith: wakeup of goroutine %d, a writer durably blocked in synctest %s "+
					"until the readers leave, by goroutine %d in %s, the last reader, which the Go runtime does not allow: "+
					"the writer stays blocked for good, holding the write lock, and the read-write lock cannot be taken again "+
					"(goroutine %d held its read lock while it ran synctest.Test, and the bubble deadlocked on it)",
					d.g, d.dom, g, cd, g)
			}
			return ""
		}
		if l.noReaders() || !l.knownReaderIn(d.dom) {
			d.post(false)
		}
	}
	return ""
}

// readersIn reports whether some goroutine holds l for reading and every
// one is of domain d (or, see holderIn, runs synctest.Test for d, or has
// exited holding its read lock, and so wakes nobody), none in the
// overflow map (whose IDs are added after the count, so cannot be
// checked). It may dump all goroutines (domainOf).
func (l *RWLock) readersIn(d Domain) bool {
	if l.rs.Load()>>rsOvShift != 0 {
		return false
	}
	some := false
	for i := range rwSlots {
		if h := l.slots[i].Load(); h != 0 {
			if !holderIn(h, d, l.holdsReadNow) {
				return false
			}
			some = true
		}
	}
	return some
}

// knownReaderIn reports whether some slot holds a goroutine that the
// domain cache places in d.
func (l *RWLock) knownReaderIn(d Domain) bool {
	for i := range rwSlots {
		if h := l.slots[i].Load(); h != 0 {
			if hd, ok := cachedDomain(h); ok && hd == d {
				return true
			}
		}
	}
	return false
}

// Lock blocks until g holds the write lock: the writer lock first, then
// the readers gone. The caller has checked for re-entry. ctx may be nil.
// On failure g holds nothing new, and readers that queued behind it in the
// meantime are let in.
func (l *RWLock) Lock(g int64, ctx context.Context, k *Class) error {
	return l.LockDeadline(g, ctx, time.Time{}, k)
}

// LockDeadline is Lock that also gives up at deadline, unless it is the
// zero Time, returning context.DeadlineExceeded. Its two waits (for the
// writer lock, then for the readers to leave) make the timer only when
// about to park, and share it on a channel park: one timer per call. (A
// park on sem, in a bubble, makes a callback per wait, as the callback
// names its waiter.)
func (l *RWLock) LockDeadline(g int64, ctx context.Context, deadline time.Time, k *Class) error {
	var dt deadlineTimer
	if !l.w.FastAcquire(g) {
		if err := l.w.acquireDeadline(g, ctx, deadline, k, &dt); err != nil {
			return err
		}
	}
	if l.noReaders() {
		return nil
	}
	return l.drain(g, ctx, deadline, k, &dt)
}

// drain waits, holding the writer lock, until the readers have left.
func (l *RWLock) drain(g int64, ctx context.Context, deadline time.Time, k *Class, dt *deadlineTimer) error {
	w := newWaiter(g, &l.w, k)
	w.rw, w.awaits = l, waitDrain
	if w.dom == DomOutside {
		w.ch = make(chan struct{}, 1)
	}
	p := newParker(w, ctx, deadline)
	q := (*drainQueue)(l)
	// The handshake with RUnlock: the drainer is published and the flag
	// set before the scan; a reader stores 0 in its slot and then loads
	// the flag. Either the scan sees the slot free or the reader wakes w.
	l.drainer.Store(w)
	l.rs.Or(rsDraining)
	for !l.noReaders() {
		if err := l.drainExited(w); err != nil { // a reader has exited holding its read lock
			p.quit(q, dt)
			return err
		}
		if spinUntil(l.noReaders) {
			break
		}
		if cycle := p.enter(); cycle != nil {
			p.quit(q, dt)
			return deadlock(cycle)
		}
		if testHookDrain != nil {
			testHookDrain(l, true)
		}
		how := l.drainPark(w)
		if testHookDrain != nil {
			testHookDrain(l, false)
		}
		if l.noReaders() {
			break
		}
		if how == parkSema {
			// Any leaving reader posts, and so do the callbacks: after a
			// token, drainFailed says whether the wait is over.
			p.armCallbacks(q)
			if l.drainFailed(&p) == nil {
				p.park(true, q, dt)
			}
			if err := l.drainFailed(&p); err != nil {
				p.quit(q, dt)
				return err
			}
			continue
		}
		if err := l.drainFailed(&p); err != nil {
			p.quit(q, dt)
			return err
		}
		switch p.park(false, q, dt) {
		case parkDone:
			p.quit(q, dt)
			return ctx.Err()
		case parkExpired:
			if l.noReaders() {
				break // the readers left as the deadline passed: the lock is taken
			}
			p.quit(q, dt)
			return context.DeadlineExceeded
		}
	}
	l.endDrain()
	p.finish(dt)
	return nil
}

// drainFailed returns why the drain ends unfinished (ctx done or the deadline
// past while readers remain), or nil.
func (l *RWLock) drainFailed(p *parker) error {
	if err := p.failed(); err != nil && !l.noReaders() {
		return err
	}
	return nil
}

// endDrain withdraws the draining writer.
func (l *RWLock) endDrain() {
	l.rs.And(^int64(rsDraining))
	l.drainer.Store(nil)
}

// drainQueue is an RWLock's draining writer as a parkQueue: it waits for
// no queue, so a callback only wakes it, and a writer that gives up
// releases the writer lock, letting in the readers queued behind it.
type drainQueue RWLock

func (q *drainQueue) cancel(w *waiter, _ error) { w.post(true) }

func (q *drainQueue) abandon(w *waiter) {
	l := (*RWLock)(q)
	l.endDrain()
	l.Unlock(w.g)
}

// testHookDrain, if set (by tests), runs in drain just before (before
// true) and just after drainPark.
var testHookDrain func(l *RWLock, before bool)

// drainPark chooses and publishes how the draining writer w parks next;
// the caller then looks at the readers again before it parks. Any
// goroutine that leaves the read side (a reader that unlocks, or one that
// backs out on seeing the writer, see enterRead) may have to wake w, and
// any goroutine of any domain may be about to back out; a goroutine of
// another domain never wakes a durable w (wakeDrainer). So w parks durably
// only if a goroutine of its bubble is bound to wake it: when, after the
// choice is published, some reader is of its bubble and every reader is
// (readersIn).
//   - Each such reader leaves after the check, so after the publication:
//     it stores 0 in its slot, then loads the mode and finds durable. It
//     wakes w unless a reader that the domain cache places in w's bubble
//     is still in a slot (knownReaderIn), which then leaves in turn; the
//     last of them to leave (the stores are totally ordered, each looks
//     after its own) finds none and wakes w. A goroutine that backs out
//     meanwhile and is known to be of the bubble counts as one of them
//     (it stores 0, then looks, as a leaving reader does); any other
//     makes the reader that sees it wake w, which then looks again.
//   - A goroutine that comes in after the check is not a reader (the
//     writer lock is held), only backing out. With no reader of its
//     bubble in, w would be left to such a goroutine of another domain,
//     seen by the caller's look, which does not wake a durable w: so w
//     parks on sem then, which anyone may end. The case arises when the
//     last reader leaves (or backs out) just before the choice, in any
//     domain, and another domain's goroutine backs out just after it.
//
// Rejected alternative: choosing durable when every reader is of the
// bubble, with none in at all. It loses the wakeup in the second case,
// which the drain then sleeps through for good.
func (l *RWLock) drainPark(w *waiter) uint32 {
	switch {
	case w.dom == DomOutside:
		w.pmode.Store(parkChan)
	case w.dom.Bubble() && l.readersIn(w.dom):
		w.makeChan() // w.sema is false
		w.pmode.Store(parkDurable)
		if !l.readersIn(w.dom) {
			w.pmode.Store(parkSema)
		}
	default:
		w.pmode.Store(parkSema)
	}
	return w.pmode.Load()
}
