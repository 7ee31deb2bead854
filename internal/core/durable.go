package core

import (
	"fmt"

	"github.com/locksmith-go/locksmith/internal/gid"
)

// mayTake reports whether the calling goroutine may take the lock while
// durable waiters are queued: only a goroutine of their bubble may. *d
// caches the caller's domain across calls. The caller holds mu, so that
// the answer still holds at its CompareAndSwap (see tryAcquireDurable).
func (l *Lock) mayTake(d *Domain) bool {
	if *d == 0 {
		*d = CurDomain()
	}
	dur := Domain(l.durDom.Load())
	if testHookMayTake != nil {
		testHookMayTake(l)
	}
	return dur == *d
}

// testHookMayTake, if set (by tests), runs in mayTake between the load of
// durDom and the caller's CompareAndSwap.
var testHookMayTake func(*Lock)

// durableOK, under mu, reports whether w, in a bubble, may park durably in
// state s, in which the lock is held or durable waiters of another bubble
// are queued: the holder, every queued waiter and the woken waiter in
// flight must be of w's bubble (a holder may also run synctest.Test for
// it, or have exited holding the lock: see holderIn). While woken is set, wokenDom is the
// woken waiter's domain, or, until the releaser that set woken has
// dequeued a waiter, the releaser's: the waiter it dequeues may be w (the
// waiter it meant to wake may have left the queue in between, and a
// goroutine of w's bubble taken the free lock). (wokenDom may name
// a waiter that has since taken the lock or queued again; then it is
// checked as holder or queued waiter too, and a stale answer only makes w
// park on sem.) A holder that
// took the lock on the fast path is looked up in the domain cache, or in a
// dump of all goroutines: only waiters in bubbles ever pay for that.
func (l *Lock) durableOK(w *waiter, s int64) bool {
	if s&flagDurable != 0 && Domain(l.durDom.Load()) != w.dom {
		return false
	}
	if s&flagWoken != 0 && Domain(l.wokenDom.Load()) != w.dom {
		return false
	}
	for q := l.q.head; q != nil; q = q.next {
		if q.dom != w.dom {
			return false
		}
	}
	return holderIn(s>>ownerShift, w.dom, l.heldBy)
}

// heldBy reports whether g holds l now.
func (l *Lock) heldBy(g int64) bool { return l.Owner() == g }

// checkWaker panics if the calling goroutine is about to wake a durable
// waiter of another domain, which the Go runtime would answer with a fatal
// error. The rules on parking make it impossible; a panic (which can be
// recovered, and names the cause) is the better failure should they not.
func (w *waiter) checkWaker() {
	if msg, bad := w.foreignWaker(); bad {
		panic(msg)
	}
}

// foreignWaker reports whether w is a durable waiter of a domain other
// than the calling goroutine's, and if so returns a message naming both
// sides, what w parked behind and the lock's state.
func (w *waiter) foreignWaker() (msg string, bad bool) {
	if !w.durable {
		return "", false
	}
	d := CurDomain()
	if d == w.dom {
		return "", false
	}
	g := gid.Get()
	l := w.lock
	woken := Domain(l.wokenDom.Load())
	dump := allStacks()
	return fmt.Sprintf("locksmith: wakeup of goroutine %d, durably blocked in synctest %s, by goroutine %d in %s, "+
		"which the Go runtime does not allow: the waiter stays blocked and the lock goes on without it "+
		"(usually goroutine %d held the lock while it ran synctest.Test, and the bubble deadlocked on it; "+
		"the waiter parked behind holder %d, cached as %s, in state %#x; the lock: state %#x, durable domain %s, woken domain %s; "+
		"the goroutines' headers now: %q, %q, %q)",
		w.g, w.dom, g, d, w.durHolder, w.durHolder, w.durHolderDom, w.durState,
		l.state.Load(), Domain(l.durDom.Load()), woken,
		headerOf(dump, w.g), headerOf(dump, g), headerOf(dump, w.durHolder)), true
}
