package condvar

import (
	"sync/atomic"

	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/rt"
)

// afterTicket goes on with a wait that took ticket t while c.tick changed
// from s (see keepTicketOrMove).
func (c *Cond) afterTicket(b *binding, dom core.Domain, t uint32, s uint64) {
	w := c.getWaiter() // the record to queue on if t is given up
	s, pass, ok := c.keepTicketOrMove(t, s, w)
	if ok {
		c.putWaiter(w)
		c.waitTicket(b, t, s, pass)
		return
	}
	if movedHook != nil {
		movedHook(c)
	}
	c.waitQueued(b, dom, false, 0, nil, w)
}

// ticketHook, if set (by tests, while nobody waits), runs just before
// (taken false) and just after (taken true) a wait takes its ticket,
// between the two loads of c.tick that bracket it, so that tests can
// queue a waiter or broadcast there.
var ticketHook func(c *Cond, taken bool)

// movedHook, if set (by tests, while nobody waits), runs in a wait that
// gave up its ticket (see keepTicketOrMove), just before it queues.
var movedHook func(c *Cond)

// The bits of Cond.tick.
const (
	tickQueued    = 1 // the queue is not empty
	tickBroadcast = 2 // a Broadcast is under way; each Broadcast adds it twice
)

// keepTicketOrMove is called by a waiter that took ticket t while c.tick
// changed from s: a waiter was queued, or a Broadcast ran, meanwhile. It
// takes mu, so that no Broadcast is under way, and returns the tick state
// to compare later Broadcasts against, and whether a Signal that notified
// t is passed on if the wait cannot end normally (see waitTicket).
//
// A t not yet notified is older than every queued waiter, and kept, unless
// the queue's head queued before t was taken (its tk says so): then t is
// given up to skip and ok is false, and w, the caller's record, joins
// movers until the caller queues it where FIFO puts it (see
// insertAfterTicket), so that a Signal or Broadcast made meanwhile still
// finds the wait (see signalLocked). A t already notified is kept. Its
// notification was a Signal's, to pass on, unless a Broadcast ran since s
// and t is below bhi: then that Broadcast, or a Signal before it, woke
// it, and nothing is passed on, as in waitTicket.
func (c *Cond) keepTicketOrMove(t uint32, s uint64, w *waiter) (now uint64, pass, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now = c.tick.Load()
	if !less(t, c.notified()) {
		if h := c.head; h != nil && !less(t, h.tk) {
			// The queue's head queued before t was taken.
			c.skip = append(c.skip, t)
			c.dropSkipped()
			w.moved, w.after, w.pre = true, t+1, 0
			c.movers = append(c.movers, w)
			return now, false, false
		}
		// Not notified, so no Broadcast since s covered it.
		return now, true, true
	}
	// Notified: by a Signal (pass it on if need be), unless a Broadcast
	// ran since s and the ticket is below the last one's end, bhi.
	return now, now>>1 == s>>1 || !less(t, c.bhi), true
}

// notified returns the next ticket to notify. The caller holds mu (only
// holders of mu change it).
func (c *Cond) notified() uint32 { return atomic.LoadUint32(&c.nl.Notify) }

// waitTicket is an untimed wait outside bubbles on ticket t, taken while
// no waiter was queued: it releases the lock, parks until t is notified
// and retakes the lock (Wait has a copy of it). s is the Cond's tick state
// when or after t was taken. If releasing or retaking the lock panics or
// ends the goroutine, and pass is true, the Signal that notified t (if one
// did) is passed on, unless a Broadcast has run since s: a Broadcast
// notifies every ticket waiting, so t's notification was then the
// Broadcast's, or a Signal's followed by a Broadcast that woke every other
// waiter there was (sync.Cond's rule for what a wakeup covers).
func (c *Cond) waitTicket(b *binding, t uint32, s uint64, pass bool) {
	phase := ticketReleasing
	reg := c.beginTicket(b, t)
	defer func() {
		if phase != ticketDone {
			if phase == ticketReleasing {
				c.dropTicket(reg, t)
			}
			c.ticketFailed(phase, t, s, pass)
		}
	}()
	holds := c.release(b)
	phase = ticketRetaking
	rt.NotifyListWait(&c.nl, t)
	endTicket(reg)
	c.raceAcquire()
	c.restore(b, holds)
	phase = ticketDone
}

// ticketFailed cleans up after a ticket wait whose release (phase
// ticketReleasing) or retake (ticketRetaking) of the lock panicked or
// ended the goroutine.
func (c *Cond) ticketFailed(phase int, t uint32, s uint64, pass bool) {
	if phase == ticketReleasing {
		c.abandonTicket(t, s, pass)
		return
	}
	// The signal that woke it, if a Signal did, is passed on.
	if pass && c.tick.Load()>>1 == s>>1 {
		c.signal()
	}
}

// The phases of waitTicket, for its deferred clean-up.
const (
	ticketReleasing = iota
	ticketRetaking
	ticketDone
)

// abandonTicket ends a ticket wait whose release of the lock panicked. A
// ticket already notified by a Signal passes the signal on; one not yet
// notified is added to skip, so that no Signal is spent on it.
func (c *Cond) abandonTicket(t uint32, s uint64, pass bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !less(t, c.notified()) {
		c.skip = append(c.skip, t)
		c.dropSkipped()
		return
	}
	if pass && c.tick.Load()>>1 == s>>1 {
		c.signalLocked()
	}
}

// dropSkipped notifies the oldest tickets not yet notified for as long as
// they are abandoned ones, forgetting them, so that no ticket in skip is
// older than every ticket a goroutine waits on: abandoned tickets with
// nobody waiting before them are not kept until a Signal comes. The
// caller holds mu.
func (c *Cond) dropSkipped() {
	for len(c.skip) != 0 {
		n := c.notified()
		if atomic.LoadUint32(&c.nl.Wait) == n || !c.skipped(n) {
			return
		}
		rt.NotifyListNotifyOne(&c.nl) // nobody waits on n
	}
}

// skipped reports whether t is an abandoned ticket, and forgets it. The
// caller holds mu.
func (c *Cond) skipped(t uint32) bool {
	for i, s := range c.skip {
		if s == t {
			c.skip = append(c.skip[:i], c.skip[i+1:]...)
			return true
		}
	}
	return false
}

// The ticket path exists so that an untimed wait outside bubbles costs
// what sync.Cond's does plus the checks: one ticket on c.nl (the
// runtime's notify list, see rt.NotifyList), one park, no record and no
// lock of the Cond's own. With every wait queued on a record that parked
// on its own sync.Cond, BenchmarkCondPingPongRatio's ratio to sync.Cond's
// CPU time is about half as much again as with the ticket list (and Wait
// written out, see there). The purego build (ticketPath false) queues
// every wait, so alternating `go test -run '^$' -bench PingPongRatio
// ./condvar` with and without -tags purego shows the difference.

// less reports whether ticket a comes before ticket b, for counters that
// wrap around (the runtime's rule: their difference stays below 2^31).
func less(a, b uint32) bool { return int32(a-b) < 0 }
