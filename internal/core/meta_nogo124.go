//go:build !go1.24

package core

// Before go1.24 there are no weak pointers (see internal/compat): a Meta
// holds its lock strongly, so a lock with a Meta is never collected and
// the scan (scanMetas) finds none to forget. The registry is bounded
// instead. Each scan, once per garbage collection, that finds more than
// maxMetas Metas registered forgets the oldest ones whose locks are not
// in use (not held, no waiters, no readers, no holds lost by a Cond
// wait) until maxMetas*7/8 are left, as if their locks had been
// collected: each lets go of its lock, is marked gone and is passed to
// Engine.Forget. A lock forgotten so that is used again gets a new Meta,
// as a lock revived by a finalizer does: what package detect knew of it
// goes (in Order mode, the orders it was taken in; the order between the
// locks around it stays, as bypass edges), so an inversion through it is
// reported only once both of its orders are seen again.
//
// What that costs: after each collection the detector holds at most
// maxMetas locks that the program may have dropped, each with the object
// it lies in, plus those that got a Meta since (Metas are allocated, so
// the collector runs as they pile up); the Metas and Order-mode graph
// nodes are bounded alike.
const maxMetas = 1 << 14

// evictMetas forgets the oldest Metas whose locks are not in use while
// more than maxMetas are registered (see above). It keeps the others in
// the order they were registered.
func evictMetas() {
	scanMu.Lock()
	defer scanMu.Unlock()
	lockMetas()
	n := metas.all.Len()
	if n <= maxMetas {
		metas.mu.Unlock()
		return
	}
	excess := n - maxMetas*7/8
	dead := scanDead[:0]
	w := 0
	for r := range n {
		e := *metas.all.At(r)
		if len(dead) < excess && !inUse(e.m) {
			e.m.Flags.Or(FlagGone)
			e.lock.Clear() // the Meta's own copy too
			dead = append(dead, e.m)
			continue
		}
		*metas.all.At(w) = e
		w++
	}
	for metas.all.Len() > w {
		metas.all.Pop()
	}
	metas.mu.Unlock()
	if len(dead) > 0 && engine != nil {
		engine.Forget(dead)
	}
	clear(dead)
	scanDead = dead[:0]
}

// inUse reports whether m's lock is held, waited for, read-held, or has
// holds lost by a Cond wait: a Meta that evictMetas keeps.
func inUse(m *Meta) bool {
	l := m.lock.Value()
	if l == nil {
		return false
	}
	if l.state.Load() != 0 {
		return true
	}
	if m.Class != nil && m.Class.RW && RWOf(l, m.Class).Readers() > 0 {
		return true
	}
	lh := m.lost.Load()
	return lh != nil && lh.n.Load() > 0
}
