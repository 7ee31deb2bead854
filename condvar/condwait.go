package condvar

import (
	"unsafe"

	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/gid"
)

// The detector's view of Cond waits: a wait registers itself (see
// core.CondWaitBegin) from just before it releases the lock until it runs
// again, before it retakes the lock, so that package detect's watchdog can
// report a Cond wait behind which other goroutines are stuck, and Dump can
// list the waiters. Waits are registered only while the detector asks for
// them (core.CondWatch: while a wait timeout is configured), so that
// without one a wait pays one atomic load for it.

// beginWait registers the calling goroutine as waiting on c, and reports
// whether it did, for endWait. It is small enough to inline, so that a
// wait with registration off pays one atomic load and a branch.
func (c *Cond) beginWait(b *binding) bool {
	if !core.CondWatch() {
		return false
	}
	c.register(b)
	return true
}

func (c *Cond) register(b *binding) {
	t := b.tag.Load()
	if t == nil {
		t = c.newTag(b)
	}
	core.CondWaitBegin(gid.Get(), t)
}

// newTag makes b's CondTag, on c's first registered wait: the lock's Meta
// is made only once detection needs it.
func (c *Cond) newTag(b *binding) *core.CondTag {
	t := &core.CondTag{Cond: uintptr(unsafe.Pointer(c)), Type: b.typ}
	if b.lk != nil {
		t.Lock = b.lk.Meta(b.lkClass)
	}
	b.tag.CompareAndSwap(nil, t) // a failure means another first wait won
	return b.tag.Load()
}

// endWait ends the registration beginWait made, if it made one.
func endWait(registered bool) {
	if registered {
		core.CondWaitEnd(gid.Get())
	}
}
