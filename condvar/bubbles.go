package condvar

import (
	"sync/atomic"

	"github.com/locksmith-go/locksmith/internal/core"
)

// pendHook, if set (by tests), runs in decidePending between the
// decision and the record, under pmu; expireHook as a wait's timeout or
// cancellation callback starts. They are atomic because such a callback
// may still be running after its wait has returned (see Cond).
var pendHook, expireHook atomic.Pointer[func(c *Cond)]

// decidePending is decide by a goroutine that cannot wake w, parked
// durably in another bubble (Go would kill the program): it decides the
// wait, records it on c.pend for a goroutine of the waiter's bubble to
// wake (deliver), and marks c shared. The decision and the record are
// one step under pmu, so that a goroutine of the bubble that finds the
// wait decided and then takes pmu (the wait's own timeout or
// cancellation callback: expire) finds the waiter woken or recorded.
//
// Rejected alternative: deciding first and taking pmu only to record the
// waiter, as the wakeups that may wake do. A timeout that fires in
// between finds the wait decided and nothing recorded, and returns; the
// waiter then sleeps until something else in its bubble uses the Cond,
// which a bubble waiting only on that timeout never does.
func (c *Cond) decidePending(w *waiter, expect, gen, d uint64) bool {
	c.pmu.Lock()
	if !w.st.CompareAndSwap(expect, gen<<stShift|d) {
		c.pmu.Unlock()
		return false
	}
	if h := pendHook.Load(); h != nil {
		(*h)(c)
	}
	c.dom.Store(uint64(core.DomMixed))
	w.pnext, c.pend = c.pend, w
	c.npend.Add(1)
	c.pmu.Unlock()
	return true
}

// Sharing a Cond across testing/synctest bubbles.
//
// A goroutine outside bubbles parks on c.nl or on its waiter's sync.Cond:
// anyone may wake it (the runtime checks only a bubbled waiter's waker). A
// goroutine inside a bubble parks there, durably, only while every
// goroutine seen waiting on or signalling c is of its bubble
// (parkDurably); otherwise on sem, which anyone may release, and then it
// is not durably blocked. Signallers are not known in advance, so this can
// fail once per Cond: a goroutine of another domain (or a timeout or
// context callback running in one) may decide a wait that is parked
// durably. It cannot wake it without a fatal error, so it records c as
// mixed (later waiters in bubbles park on sem) and leaves the decided wait
// on c.pend; the next Wait, Signal or Broadcast by a goroutine of the
// waiter's bubble, or the firing of a timeout of a wait of that bubble
// (the waiter's own, if it has one), wakes it. If nothing in the bubble
// does, the bubble is blocked, and synctest reports it as deadlocked.
//
// Rejected alternatives: forgetting the domains once nobody waits, so that
// a package-level Cond used by one bubbled test after another stays
// durable; a foreign signaller could then strand a waiter on c.pend at any
// time, not just once. Tying durability to the lock (refusing the lock to
// foreign goroutines while durable waiters wait) deadlocks a bubble that
// waits for a signal from outside.

// parkDurably records d as a domain that waits on c and reports whether a
// waiter of d parks durably: d is a bubble and the only domain c has seen.
// New records the creator's domain: a Cond made outside bubbles (a
// package-level one, say) is treated as shared, and its waiters in bubbles
// park on sem from the start, so the case above cannot arise for it; a
// Cond made inside a bubble, the usual case in a synctest test, is
// durable for its bubble's waiters until another domain uses it. A Cond
// made as a struct (&Cond{L: l}) runs no code when made: its first waiter
// or signaller is the first domain it records.
func (c *Cond) parkDurably(d core.Domain) bool {
	for {
		cur := core.Domain(c.dom.Load())
		switch {
		case cur == d:
			return d.Bubble()
		case cur == core.DomMixed:
			return false
		}
		next := d
		if cur != 0 {
			next = core.DomMixed
		}
		if c.dom.CompareAndSwap(uint64(cur), uint64(next)) {
			return next == d && d.Bubble()
		}
	}
}

// touch records the caller's domain as one that signals c, when that
// matters (c has seen one bubble only). It is one load for a Cond used
// outside bubbles.
func (c *Cond) touch() {
	if cur := core.Domain(c.dom.Load()); cur.Bubble() {
		if d := core.CurDomain(); d != cur {
			c.dom.Store(uint64(core.DomMixed)) // sticky: nothing else is ever stored over it
		}
	}
}

// deliverAfter delivers, after a Signal or Broadcast has released mu, the
// pending wakeups that the caller may deliver. It looks after its turn
// under mu, not before, so that it finds those recorded by every Signal
// and Broadcast that took mu before it (they record under mu, in
// decidePending), also one that was under way when it began. It is one
// load when nothing is pending, inlined into its callers.
func (c *Cond) deliverAfter() {
	if c.npend.Load() != 0 {
		c.deliverHere()
	}
}

// deliverHere delivers the pending wakeups of the caller's domain.
func (c *Cond) deliverHere() { c.deliver(core.CurDomain()) }

// The bits of waiter.parking, below the domain.
const (
	parkDurable  = 1
	parkSem      = 2
	parkDomShift = 2
)

// notify wakes w, whose wait has just been decided by the caller, a
// goroutine that may wake it: any goroutine for a wait on sem or outside
// bubbles, one of the waiter's bubble for a durable wait (decide sends
// the others to decidePending).
func (c *Cond) notify(w *waiter) {
	how := w.parking.Load()
	switch {
	case how&parkSem != 0:
		w.sem.Unlock()
	default:
		w.park.Broadcast()
	}
}

// unpend takes w off c.pend, if it is there: a wait abandoned by its own
// goroutine after a goroutine of another domain decided it (abandon). It
// is a walk of the pending list, on that rare path only.
func (c *Cond) unpend(w *waiter) {
	c.pmu.Lock()
	for p := &c.pend; *p != nil; p = &(*p).pnext {
		if *p == w {
			*p, w.pnext = w.pnext, nil
			c.npend.Add(-1)
			break
		}
	}
	c.pmu.Unlock()
}

// deliver wakes the pending waiters of domain d (the caller's).
func (c *Cond) deliver(d core.Domain) {
	c.pmu.Lock()
	for p := &c.pend; *p != nil; {
		w := *p
		if core.Domain(w.parking.Load()>>parkDomShift) != d {
			p = &w.pnext
			continue
		}
		*p, w.pnext = w.pnext, nil
		c.npend.Add(-1)
		w.park.Broadcast()
	}
	c.pmu.Unlock()
}
