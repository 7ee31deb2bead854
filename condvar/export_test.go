package condvar

import (
	"sync"

	"github.com/locksmith-go/locksmith/internal/core"
)

// LockQueueLen returns the number of goroutines parked in the wait queue of
// l, a *mutex.Mutex or *monitor.Monitor, so that the fuzz targets can see a
// goroutine queue on the lock (a Cond waiter retaking it, say) without
// sleeping. It returns -1 for a lock that is not a locksmith lock.
func LockQueueLen(l sync.Locker) int {
	a, ok := core.Adapt(l)
	if !ok {
		return -1
	}
	return a.Lock.QueueLen()
}

// SetTicketHook makes f run in every untimed wait outside bubbles just
// before (taken false) and just after (taken true) it takes its ticket,
// before it checks whether a waiter was queued or a Broadcast ran
// meanwhile, until the returned function is called. Set it only while no
// goroutine waits.
func SetTicketHook(f func(c *Cond, taken bool)) (reset func()) {
	ticketHook = f
	return func() { ticketHook = nil }
}

// SkipLen returns the number of abandoned tickets c still remembers.
func SkipLen(c *Cond) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.skip)
}

// SetMovedHook makes f run in every wait that gave up its ticket to queue
// instead (see keepTicketOrMove), between giving it up and queueing,
// until the returned function is called. Set it only while no goroutine waits.
func SetMovedHook(f func(c *Cond)) (reset func()) {
	movedHook = f
	return func() { movedHook = nil }
}

// SetPendHook makes f run in a goroutine that has decided a wait parked
// durably in another bubble than its own, just before the waiter is put
// on the Cond's pending list, and SetExpireHook makes f run as a wait's
// timeout or cancellation callback starts, until the returned function is
// called.
func SetPendHook(f func(c *Cond)) (reset func()) {
	pendHook.Store(&f)
	return func() { pendHook.Store(nil) }
}

func SetExpireHook(f func(c *Cond)) (reset func()) {
	expireHook.Store(&f)
	return func() { expireHook.Store(nil) }
}

// TicketPath reports whether untimed waits outside bubbles may take a
// ticket (not when built with -tags purego).
const TicketPath = ticketPath

// SlotWaits returns the number of waits registered in c's own slots (see
// condwait.go), and whether c's first registered wait listed c for them.
func SlotWaits(c *Cond) (n int, listed bool) {
	b := c.b.Load()
	return c.watch.Waiting(&c.nl), b != nil && b.slots.Load()
}
