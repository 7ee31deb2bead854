package condvar

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locksmith-go/locksmith/internal/core"
)

// A wait's decision, in the low bits of waiter.st.
const (
	stSignal uint64 = 1 // woken by Signal
	stGone   uint64 = 2 // by its own timeout or cancellation, or by a panic in its set-up
	stAll    uint64 = 3 // woken by Broadcast
	stMask   uint64 = 3
	stShift         = 2 // st is gen<<stShift | decision
)

// waiter is one goroutine's queued wait (a ticket wait has no record: see
// Cond.mu). It parks on its own sync.Cond, so that
// Signal wakes exactly the waiter it chose, and that sync.Cond's Locker is
// the waiter itself: sync.Cond.Wait takes its ticket on the runtime's notify
// list, then calls w.Unlock, which queues the waiter and releases the
// user's lock, and then parks until the ticket is notified (at once if it
// already was). So the waiter is visible to Signal only once its ticket is
// taken, no wakeup can fall between queueing and parking, and no lock is
// held across the park or retaken after it.
//
// How a wait ends is decided by one CompareAndSwap on st, from the value it
// had when the wait was queued to this wait's generation and decision:
// Signal (and Broadcast) and the timeout or cancellation callback each try
// it, and exactly one wins. A Signal whose CAS fails skips that waiter
// and goes on to the next, so no signal is lost; a stale callback from an
// earlier use of the record fails it, because st only grows. The winner
// then notifies park: the waiter is woken exactly once per wait. A waiter
// that timed out unlinks itself from the queue when it wakes (Java's
// AbstractQueuedSynchronizer does the same), so a timeout takes no lock.
//
// Signal and Broadcast decide differently, so that only a Signal's wakeup
// is passed on when the waiter it chose cannot use it (its set-up
// panicked, or retaking the lock panicked): Broadcast woke everyone, and a
// waiter that queued since must not be woken for it.
//
// Rejected alternatives:
//   - Laying the Cond and the waiter out by cache line (what Wait and
//     Signal both touch in one 64-byte line each): BenchmarkCondPingPongRatio
//     shows no difference with and without it (interleave the builds:
//     `go test -run '^$' -bench PingPongRatio ./condvar`).
//   - A channel per waiter. A channel must be made per wait (one made inside
//     a testing/synctest bubble must not be used outside it, so it cannot be
//     pooled), which cost two allocations per Wait and made a ping-pong
//     through the Cond several times slower than through sync.Cond
//     (BenchmarkCondPingPongRatio).
//   - A sync.Cond per waiter bound to Cond.mu, checking a flag in a loop:
//     correct, but each wait then took mu three times and retook it after
//     the park, 1.5-1.7 times sync.Cond's ping-pong on the same machine.
//   - sync.WaitGroup as the parking primitive: Done from outside the
//     synctest bubble of the Add is a fatal error, which a timer or
//     context callback could trigger.
//
// sync.Cond.Wait is durably blocking inside a bubble, needs no allocation,
// and is safe to reuse across bubbles. But a goroutine of a bubble parked
// on it must be woken from the same bubble (else the runtime kills the
// program): a waiter inside a bubble parks on park only when parkDurably
// allows it, and otherwise on sem (see there).
type waiter struct {
	c    *Cond
	park sync.Cond // park.L is the waiter: see Lock and Unlock

	// sem, a sync.Mutex used as a binary semaphore (locked: no wakeup
	// yet), is where a waiter in a bubble that may not park durably
	// parks: Unlock, the one notification of the wait, may come from any
	// goroutine. A wait on sem starts with TryLock, which takes a
	// notification that no park consumed (that of an earlier wait of the
	// record that ended without parking: its set-up panicked), and ends
	// with the Lock that takes its own.
	sem sync.Mutex

	// How this wait parks: the waiting goroutine's domain<<2 | parkDurable
	// (on park, inside a bubble) | parkSem (on sem). The waiting goroutine
	// stores it before the waiter is queued; notify loads it. (Atomic
	// because a stale timeout callback of an earlier wait may still look.)
	parking atomic.Uint64

	pnext *waiter // guarded by c.pmu: next in c.pend

	// Guarded by c.mu.
	prev   *waiter
	next   *waiter
	inq    bool
	gen    uint64 // counts uses of the record
	expect uint64 // st when this wait was queued: the CAS's old value
	tk     uint32 // tickets before tk were taken before this wait queued
	bseq   uint64 // c.tick>>1 when this wait queued: see restoreSignalled

	// Set under c.mu by keepTicketOrMove, for queueAndRelease: the wait
	// took ticket after-1 and gave it up, and queues where a waiter that queued just
	// after taking it would be, unless a Signal or Broadcast chose it
	// while it was in c.movers: pre is then stSignal or stAll (and bseq
	// set by that Signal), and it does not queue.
	moved bool
	after uint32
	pre   uint64

	st atomic.Uint64 // gen<<stShift | decision of the last decided wait

	// Owned by the waiting goroutine; set before or inside park.Wait.
	d     time.Duration
	ctx   context.Context
	holds int
	stop  func() bool
}

// Lock is called by park.Wait after the waiter wakes; there is nothing to
// retake (the user's lock is retaken by wait).
func (w *waiter) Lock() {}

// Unlock is called by park.Wait once it holds its ticket and before it
// parks: it queues the waiter and releases the user's lock.
func (w *waiter) Unlock() { w.c.queueAndRelease(w) }

// waitQueued is wait on a waiter record in the queue: w, which gave up
// its ticket (see keepTicketOrMove), or a new one if w is nil.
func (c *Cond) waitQueued(b *binding, dom core.Domain, durable bool, d time.Duration, ctx context.Context, w *waiter) bool {
	if w == nil {
		w = c.getWaiter()
	}
	w.d, w.ctx = d, ctx
	how := uint64(dom) << parkDomShift
	switch {
	case durable:
		how |= parkDurable
	case dom != core.DomOutside:
		how |= parkSem
	}
	if w.parking.Load() != how {
		// A record is reused by goroutines that park the same way, so
		// the store is rarely needed: an atomic store (an exchange on
		// amd64) costs several times a load and compare.
		w.parking.Store(how)
	}
	reg := c.beginWait(b)
	parked := false
	defer func() {
		if !parked { // queueAndRelease panicked
			endWait(reg)
		}
	}()
	if how&parkSem != 0 {
		w.sem.TryLock()
		c.queueAndRelease(w)
		w.sem.Lock()
	} else {
		// Takes a ticket, calls w.Unlock (queueAndRelease) and parks until
		// the one notification for this wait.
		w.park.Wait()
	}
	parked = true
	endWait(reg)
	decision := w.st.Load() & stMask
	holds, stop, bseq := w.holds, w.stop, w.bseq
	w.ctx, w.stop = nil, nil
	if stop != nil {
		stop()
	}
	if decision == stGone {
		// Timed out or cancelled: possibly still queued (a Signal that
		// came by since would have skipped and unlinked it).
		c.mu.Lock()
		if w.inq {
			c.unlink(w)
		}
		c.mu.Unlock()
	}
	c.putWaiter(w)
	if decision == stSignal {
		c.restoreSignalled(b, holds, bseq)
	} else {
		c.restore(b, holds)
	}
	return decision != stGone
}

// queueAndRelease queues w, arms its timeout or cancellation callback and
// releases the user's lock; it runs inside w.park.Wait, after the ticket
// is taken and before the park. A Signal
// after the queueing finds the waiter. A wait that gave up its ticket and
// was chosen while it moved (w.pre) is decided here instead, and wakes
// its own park: nobody else notifies this wait.
func (c *Cond) queueAndRelease(w *waiter) {
	c.mu.Lock()
	w.gen++
	w.expect = w.st.Load()
	pre := uint64(0)
	switch {
	case !w.moved:
		w.bseq = c.tick.Load() >> 1
		w.tk = atomic.LoadUint32(&c.nl.Wait)
		c.push(w)
	case w.pre == 0:
		w.moved = false
		c.dropMover(w)
		w.bseq = c.tick.Load() >> 1
		c.insertAfterTicket(w)
	default:
		w.moved = false
		pre, w.pre = w.pre, 0
		w.st.Store(w.gen<<stShift | pre)
	}
	c.mu.Unlock()
	if pre != 0 {
		c.notify(w)
	}
	// Pending wakeups of the waiter's bubble are delivered once it has
	// queued, as Signal delivers them once it has had its turn: then
	// every one recorded under mu before is found.
	if c.npend.Load() != 0 {
		c.deliver(core.Domain(w.parking.Load() >> parkDomShift))
	}
	expect, gen := w.expect, w.gen
	released := false
	defer func() {
		if !released {
			c.abandon(w, expect, gen)
		}
	}()
	// The callback is registered before the lock is released: the ticket
	// is already taken, so one that fires at once only ends the wait as
	// soon as it starts, and a panic from a user's context (in its Done
	// method) is covered by the defer above, with the lock still held.
	switch {
	case w.d > 0:
		w.stop = time.AfterFunc(w.d, func() { c.expire(w, expect, gen) }).Stop
	case w.ctx != nil:
		w.stop = context.AfterFunc(w.ctx, func() { c.expire(w, expect, gen) })
	}
	w.holds = c.release(c.b.Load())
	released = true
}

// abandon ends a wait whose set-up panicked after the waiter was queued:
// the lock's Unlock (a user's Locker may panic, before or after releasing
// the lock) or the context's Done. The panic leaves Wait, so the wait is
// decided as gone; if a Signal has already chosen this waiter (possible
// once the lock was released, or at any time for a Signal made without
// the lock), the signal is passed to the next waiter, so that it is not
// lost with this one, unless a Broadcast has run since (as in
// restoreSignalled). A wait that its own timeout or cancellation, or a
// Broadcast, already decided passes nothing on: nobody signalled it. A
// wait that a goroutine of another domain decided, and recorded as
// pending for its bubble (decidePending), comes off the pending list.
func (c *Cond) abandon(w *waiter, expect, gen uint64) {
	if w.stop != nil {
		w.stop()
	}
	w.ctx, w.stop = nil, nil
	c.mu.Lock()
	if !c.decide(w, expect, gen, stGone) {
		if w.parking.Load()&parkDurable != 0 {
			// Decided by a goroutine that could not wake it
			// (decidePending), which recorded it on c.pend under pmu:
			// the wait ends without that wakeup, and the record, about
			// to be reused, must not be woken for it later.
			c.unpend(w)
		}
		if w.st.Load()&stMask == stSignal && c.tick.Load()>>1 == w.bseq {
			c.signalLocked()
		}
	}
	if w.inq {
		c.unlink(w)
	}
	c.mu.Unlock()
	c.putWaiter(w)
}

// getWaiter returns a waiter record owned by the caller until the wait
// ends: one from the free list, or a new one once the Cond has served as
// many concurrent queued waits as it has records.
func (c *Cond) getWaiter() *waiter {
	c.mu.Lock()
	w := c.free
	if w != nil {
		c.free, w.next = w.next, nil
	}
	c.mu.Unlock()
	if w == nil {
		w = &waiter{c: c}
		w.park.L = w
	}
	return w
}

// putWaiter returns a waiter record whose wait is over and which is out
// of the queue to the free list.
func (c *Cond) putWaiter(w *waiter) {
	c.mu.Lock()
	w.next, c.free = c.free, w
	c.mu.Unlock()
}

// decide ends w's current wait with decision d, unless something else
// already decided it, and reports whether it did. A caller that may not
// wake w (a wait parked durably in a bubble other than the caller's
// domain) records it for its bubble instead (decidePending). w.parking,
// read before the CompareAndSwap, is the current wait's whenever expect
// is: the waiting goroutine stores it before queueAndRelease makes expect
// known.
func (c *Cond) decide(w *waiter, expect, gen, d uint64) bool {
	if how := w.parking.Load(); how&parkDurable != 0 && core.CurDomain() != core.Domain(how>>parkDomShift) {
		return c.decidePending(w, expect, gen, d)
	}
	if !w.st.CompareAndSwap(expect, gen<<stShift|d) {
		return false
	}
	c.notify(w)
	return true
}

// expire ends a timed-out or cancelled wait, unless a Signal already
// chose the waiter or the wait is over. It takes no lock: the waiter
// leaves the queue itself, or a Signal skips it.
func (c *Cond) expire(w *waiter, expect, gen uint64) {
	if h := expireHook.Load(); h != nil {
		(*h)(c)
	}
	if !c.decide(w, expect, gen, stGone) && w.parking.Load()&parkDurable != 0 {
		// Decided by another, perhaps a goroutine of another domain that
		// is recording the waiter under pmu (decidePending): deliver
		// takes pmu, so it finds the record made.
		c.deliverHere()
		return
	}
	c.deliverAfter()
}

func (c *Cond) push(w *waiter) {
	w.inq = true
	w.prev = c.tail
	if c.tail == nil {
		c.tick.Or(tickQueued)
		c.head = w
	} else {
		c.tail.next = w
	}
	c.tail = w
}

// insertAfterTicket queues w, which gave up ticket w.after-1, before the
// first queued waiter that queued after that ticket was taken.
func (c *Cond) insertAfterTicket(w *waiter) {
	t := w.after - 1
	w.tk = w.after
	x := c.tail
	for x != nil && less(t, x.tk) {
		x = x.prev
	}
	if x == nil {
		w.inq, w.prev, w.next = true, nil, c.head
		if c.head == nil {
			c.tick.Or(tickQueued)
			c.tail = w
		} else {
			c.head.prev = w
		}
		c.head = w
		return
	}
	w.inq, w.prev, w.next = true, x, x.next
	if x.next == nil {
		c.tail = w
	} else {
		x.next.prev = w
	}
	x.next = w
}

func (c *Cond) unlink(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		c.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		c.tail = w.prev
	}
	if c.head == nil {
		c.tick.And(^uint64(tickQueued))
	}
	w.prev, w.next, w.inq = nil, nil, false
}
