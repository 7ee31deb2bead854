package condvar

import (
	"unsafe"

	"github.com/locksmith-go/locksmith/internal/compat"
	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/gid"
)

// The detector's view of Cond waits: a wait registers itself from just
// before it releases the lock until it is decided (see
// internal/core/condwaits.go), so that package detect's watchdog can
// report a Cond wait behind which other goroutines are stuck, and Dump can
// list the waiters. Waits are registered only while the detector asks for
// them (core.CondWatch: while a wait timeout is configured), so that
// without one a wait pays one atomic load for it.
//
// A ticket wait (see Wait) claims a slot of c.watch, the Cond's own, next
// to the notify list it has just taken its ticket from, and does nothing
// when it wakes: the notify list's counters say that its ticket was
// notified (see internal/core/condslots.go). Every other wait, and a
// ticket wait that finds the slots taken, registers in the registry's
// table (core.CondWaitBegin) until it runs again, before it retakes the
// lock (it is then a lock waiter, if it has to wait).

// beginWait registers the calling goroutine's queued wait on c in the
// registry's table, and reports whether it did, for endWait. It is small
// enough to inline, so that a wait with registration off pays one atomic
// load and a branch.
func (c *Cond) beginWait(b *binding) bool {
	if !core.CondWatch() {
		return false
	}
	c.register(b)
	return true
}

func (c *Cond) register(b *binding) {
	core.CondWaitBegin(gid.Get(), c.tagOf(b))
}

// tagOf returns b's CondTag, making it on c's first registered wait.
func (c *Cond) tagOf(b *binding) *core.CondTag {
	if t := b.tag.Load(); t != nil {
		return t
	}
	return c.newTag(b)
}

// newTag makes b's CondTag, on c's first registered wait: the lock's Meta
// is made only once detection needs it. The wait that makes it also lists
// c for the watchdog's reading of c.watch (which costs a weak pointer to
// c), where that makes nothing reachable (see core.WatchCondSlots).
func (c *Cond) newTag(b *binding) *core.CondTag {
	t := &core.CondTag{Cond: uintptr(unsafe.Pointer(c)), Type: b.typ}
	if b.lk != nil {
		t.Lock = b.lk.Meta(b.lkClass)
	}
	if b.tag.CompareAndSwap(nil, t) && ticketPath &&
		core.WatchCondSlots(compat.MakeWeak(c), t, unsafe.Offsetof(c.nl), unsafe.Offsetof(c.watch)) {
		b.slots.Store(true)
	}
	return b.tag.Load() // a failed CompareAndSwap means another first wait won
}

// endWait ends the registration beginWait made, if it made one.
func endWait(registered bool) {
	if registered {
		core.CondWaitEnd(gid.Get())
	}
}

// The registrations of ticket waits: what beginTicket returns. A value
// i >= 1 is slot i-1 of c.watch.
const (
	regNone  = 0  // not registered
	regTable = -1 // in the registry's table
)

// beginTicket registers the calling goroutine as waiting on ticket t of
// c, and returns the registration, for endTicket and dropTicket. It is
// small enough to inline.
func (c *Cond) beginTicket(b *binding, t uint32) int {
	if !core.CondWatch() {
		return regNone
	}
	return c.registerTicket(b, t)
}

func (c *Cond) registerTicket(b *binding, t uint32) int {
	g := gid.Get()
	tag := c.tagOf(b)
	if uint64(g) < 1<<32 && b.slots.Load() {
		if c.watch.Claim(g, t, &c.nl) {
			return int(t%core.CondSlotCount) + 1
		}
		if i := c.watch.ClaimOther(g, t, &c.nl); i >= 0 {
			return i + 1
		}
	}
	core.CondWaitBegin(g, tag)
	return regTable
}

// endTicket ends the registration of a ticket wait whose ticket was
// notified: a slot's ends with the notification. It is small enough to
// inline.
func endTicket(reg int) {
	if reg == regTable {
		endTable()
	}
}

func endTable() { core.CondWaitEnd(gid.Get()) }

// dropTicket ends the registration of a wait that gives ticket t up
// without its being notified (its release of the lock panicked).
func (c *Cond) dropTicket(reg int, t uint32) {
	switch {
	case reg == regTable:
		endTable()
	case reg > 0:
		c.watch.Clear(reg-1, gid.Get(), t)
	}
}
