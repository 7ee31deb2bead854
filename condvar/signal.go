package condvar

import (
	"sync/atomic"

	"github.com/locksmith-go/locksmith/internal/rt"
)

// restoreSignalled retakes the lock for a wait that a Signal ended. If the
// retake panics (deadlock detection refused it, a reporter or the user's
// Lock panicked) or ends the goroutine, the waiter never gets to act on
// the signal, so it is passed on to the next waiter before the panic goes
// on, unless a Broadcast has run since the wait queued (bseq): it came
// after the Signal, and woke every waiter there was. (A ticket wait
// cannot tell a Signal's wakeup from one that Broadcast followed, and
// follows the same rule, so that one rule holds for every wait.)
func (c *Cond) restoreSignalled(b *binding, holds int, bseq uint64) {
	done := false
	defer func() {
		if !done && c.tick.Load()>>1 == bseq {
			c.signal()
		}
	}()
	c.restore(b, holds)
	done = true
}

func (c *Cond) signal() {
	c.mu.Lock()
	c.signalLocked() // cannot panic: no user code runs under mu
	c.mu.Unlock()
}

// signalLocked wakes the longest waiter: the oldest ticket not yet
// notified, a wait that gave up its ticket and has not yet queued, or the
// first queued waiter, whichever waited first (tickets and tk tell),
// passing over abandoned tickets and decided waiters. The caller holds mu.
func (c *Cond) signalLocked() {
	for {
		n := c.notified()
		pending := atomic.LoadUint32(&c.nl.Wait) != n
		if pending && c.skipped(n) {
			rt.NotifyListNotifyOne(&c.nl) // nobody waits on n
			continue
		}
		if len(c.movers) != 0 && c.signalMover(n, pending) {
			return
		}
		if h := c.head; h != nil && (!pending || !less(n, h.tk)) {
			c.unlink(h)
			if c.decide(h, h.expect, h.gen, stSignal) {
				return
			}
			continue // it timed out or was cancelled: the signal goes on
		}
		if pending {
			rt.NotifyListNotifyOne(&c.nl) // notifies n
			c.dropSkipped()
		}
		return
	}
}

// signalMover chooses the oldest of movers if it waited before ticket n
// (if pending) and before the queue's head, and reports whether it did.
// A mover that took ticket m waited before ticket n if m < n, and before
// a queued waiter h if h queued after m was taken (m < h.tk), as
// insertAfterTicket orders it. The caller holds mu.
func (c *Cond) signalMover(n uint32, pending bool) bool {
	i := 0
	for j, m := range c.movers {
		if less(m.after, c.movers[i].after) {
			i = j
		}
	}
	w := c.movers[i]
	m := w.after - 1
	if pending && !less(m, n) || c.head != nil && !less(m, c.head.tk) {
		return false
	}
	c.removeMover(i)
	w.pre, w.bseq = stSignal, c.tick.Load()>>1
	return true
}

// dropMover removes w from movers. The caller holds mu.
func (c *Cond) dropMover(w *waiter) {
	for i, m := range c.movers {
		if m == w {
			c.removeMover(i)
			return
		}
	}
}

func (c *Cond) removeMover(i int) {
	last := len(c.movers) - 1
	c.movers[i] = c.movers[last]
	c.movers[last] = nil
	c.movers = c.movers[:last]
}
