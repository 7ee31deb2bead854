package detect

import (
	"runtime"
	"time"
	"unsafe"

	"github.com/locksmith-go/locksmith/internal/core"
)

// Lone holds. A lock taken in Order mode by a goroutine that holds no
// other lock, while the lock has no detection state (no Meta), gets none:
// its goroutine keeps a lone record (gstate.lone) with the lock's
// address, class and the Order epoch, and no pointer, so that the lock's
// first acquisitions allocate nothing (most locks are only ever taken
// alone: a cache's, a counter's), and a record in the package-level
// goroutine tables keeps no lock, and no goroutine parked on it,
// reachable (Go's goroutine leak profile must still see them). A
// goroutine has at most one lone record: it is made only while the
// goroutine holds nothing, so every other record is above it.
//
// A lock taken while the lone lock is held gets its Meta as ever; the
// edge from the lone lock to it is kept in the lone record (defs, a
// buffer reused by the goroutine) and enters the graph when the lone
// lock is released, where the release has the lock, and makes its Meta:
// a nesting costs the outer lock's Meta and the edge at its release,
// what an immediate edge costs. For a write hold this is exact: a lock
// without Meta has only been taken alone, so no edge leads into it, and
// none can while its goroutine holds it exclusively (an edge into a lock
// is added only by acquiring it); the deferred edges close no cycle until
// they are added, and then close none either. A later acquisition of the
// lock finds its Meta and is recorded as any other.
//
// A read hold is shared: while one goroutine read-holds a lone lock with
// deferred edges, another may read-lock it under a lock of its own,
// giving it a Meta and an edge into it. The rule kept is the simple one:
// the deferred edges still enter the graph at the lone reader's release,
// and a cycle through them is reported then, by that goroutine, after the
// release (a LockOrder panic from RUnlock, with the lock released). A
// reader that never releases the lock (it exits holding it) never adds
// them.
//
// A lone write-lock that can queue of a read-write lock sets writeSeen on
// the lock itself (core.Lock.OrSeen), which its Meta, when it gets one,
// inherits. The lock's first-lock site, which no report of a lock only
// ever taken alone needs, is not recorded on the lone path (capture
// allocates for a call site seen for the first time); a lock that gets
// its Meta at a lone release has, as that site and as where its deferred
// edges' goroutine held it, the lock's holder PC (one frame; for a read
// hold, its reader slot's PC, kept in the record when it is made).
//
// A lone record has no lock to ask whether it still holds the lock (see
// held.stale). It is stale once Order mode has been left or entered
// since it was made (orderEpoch: a release made meanwhile was not seen;
// an acquisition forwarded just before Order mode was left can make its
// record just after, so leaving alone would not tell), or once its
// goroutine has exited, which only a dump of every goroutine tells: the
// sweeper takes one, for the lone records that have outlived a sweep,
// at most once every lonePeriod (spaced further with many goroutines, as
// the exited-holder check's dumps are).

// loneHold is a goroutine's lone record; addr is 0 while it has none.
type loneHold struct {
	addr  uintptr
	class *core.Class // a class descriptor: never a lock
	epoch uint32
	read  bool // held for reading
	try   bool // taken by TryLock or TryRLock
	// pc is where a read hold was taken, from the lock's reader slot
	// (core.RWLock.ReaderPC), which the release has cleared by the time
	// the edges are added; a write hold's is the lock's holder PC.
	pc uintptr
	// wrote: a TryLock write hold under which the goroutine took another
	// lock, which counts as a write-lock (see writeSeen) once the lock has
	// a Meta.
	wrote bool
	// swept: a sweep has seen the record; the next one asks whether the
	// goroutine still runs.
	swept bool
	defs  []deferredEdge
	// nest is the record of a lock without Meta taken above this one
	// (nest.go).
	nest nestHold
}

// deferredEdge is an edge from a goroutine's lone lock into to, acquired
// at at (for reading if read), not yet in the graph. to is a Meta, which
// holds its lock only weakly.
type deferredEdge struct {
	to   *core.Meta
	at   *stackRec
	read bool
}

// orderEpoch counts the times Order mode was entered or left (see
// install).
var orderEpoch hbUint32

// tryLone records g's acquisition of l, which has no Meta, as a lone
// hold if g holds nothing else, and reports whether it did. s is g's
// gstate, busy; tryLone leaves it if it made the record.
//
//go:norace
func tryLone(s *gstate, l *core.Lock, k *core.Class, g int64, try, read bool) bool {
	a := uintptr(unsafe.Pointer(l))
	if len(s.held) != 0 {
		return false
	}
	if s.lone.addr != 0 && s.lone.addr != a && !s.loneStale() {
		return false
	}
	if l.SeenFlags()&nestedInto != 0 {
		return false // an edge into l waits in a slot (nest.go)
	}
	var pc uintptr
	if read {
		pc = holdPC(l, k, g, true)
	}
	if s.lone.addr != 0 {
		s.dropStaleLone() // stale, or a record of l itself
		if len(s.held) != 0 {
			return false // its nest record's lock is held: see dropNest
		}
	}
	// Field by field, as in dropLone: the record is empty, and a struct
	// literal built on the stack and copied in 16-byte moves stalls on
	// store forwarding, a fifth of the uncontended Order pair's CPU
	// profile (go test -run '^$' -bench MutexUncontendedPair -cpuprofile
	// ./bench/detectcost).
	lh := &s.lone
	lh.addr, lh.class, lh.epoch = a, k, orderEpoch.Load()
	lh.read, lh.try, lh.pc = read, try, pc
	s.leave(g, len(s.held)+1)
	return true
}

// dropLone forgets s's lone record without adding its deferred edges. It
// leaves defs' buffer for the next record, cleared, and writes only the
// fields a record sets (see tryLone).
//
//go:norace
func (s *gstate) dropLone() { s.dropLoneKeep(false) }

// dropStaleLone is dropLone for a record found stale while its goroutine
// still runs: a nest record's inner lock, if held, stays recorded (see
// dropNest).
//
//go:norace
func (s *gstate) dropStaleLone() { s.dropLoneKeep(true) }

//go:norace
func (s *gstate) dropLoneKeep(keep bool) {
	lh := &s.lone
	if lh.nest.addr != 0 {
		s.dropNest(keep)
	}
	if len(lh.defs) != 0 {
		clear(lh.defs)
		lh.defs = lh.defs[:0]
	}
	lh.addr, lh.class, lh.epoch = 0, nil, 0
	lh.read, lh.try, lh.pc, lh.wrote, lh.swept = false, false, 0, false, false
}

// loneEdge is nearest's answer for the lone lock, reached below every
// record that passes through: the deferred edge into m, if known, or a
// miss (validate defers it).
//
//go:norace
func (s *gstate) loneEdge(m *core.Meta) (at *stackRec, known, miss bool) {
	lh := &s.lone
	if lh.addr == 0 || lh.addr == m.Addr {
		return nil, false, false
	}
	if lh.try && !lh.read && lh.class.RW && !lh.wrote {
		return nil, false, true
	}
	for i := range lh.defs {
		if lh.defs[i].to == m {
			return lh.defs[i].at, true, false
		}
	}
	return nil, false, true
}

// deferEdge keeps the edge from s's lone lock into m, acquired at at,
// for the lone lock's release; validate calls it when its walk of the
// held records reaches the lone one.
//
//go:norace
func (s *gstate) deferEdge(m *core.Meta, at *stackRec, read bool) {
	lh := &s.lone
	if lh.addr == 0 || lh.addr == m.Addr {
		return
	}
	if lh.try && !lh.read && lh.class.RW {
		lh.wrote = true
	}
	for i := range lh.defs {
		if lh.defs[i].to == m {
			return
		}
	}
	lh.defs = append(lh.defs, deferredEdge{to: m, at: at, read: read})
}

// releaseLone ends s's lone record, the hold of l, and adds its deferred
// edges to the graph: l gets its Meta. It returns the cycles they close
// (only a read hold's can close any: see the top of this file). s is g's
// gstate, busy.
//
//go:norace
func releaseLone(s *gstate, l *core.Lock, g int64) (found []pending) {
	lh := &s.lone
	if lh.nest.addr != 0 {
		if lh.nest.held {
			s.materializeNest(g) // released out of order: see nest.go
		} else {
			s.handOffNest(l)
			// l is free already (the release is forwarded after it): a
			// goroutine may have taken it under another lock, made its
			// Meta and placed an edge into it before the slot was ready,
			// which its drain then skipped. Either it sees the slot ready
			// or this load sees its Meta (both sides' atomics are
			// sequentially consistent); in the second case the edge is
			// placed here, and a cycle it closes is reported by this
			// release, as a deferred edge's would be.
			if l.PeekMeta() != nil && nestDirty.Load() != 0 {
				graphMu.Lock()
				found = drainNests(found)
				graphMu.Unlock()
			}
		}
	}
	if len(lh.defs) == 0 && !lh.wrote {
		s.dropLone()
		return found
	}
	m := l.Meta(lh.class)
	if lh.wrote && m.Flags.Load()&writeSeen == 0 {
		m.Flags.Or(writeSeen) // no edge leads into m yet: no pending cycle
	}
	var fromAt *stackRec
	// Where g took the lock: its holder PC, or the reader slot's PC kept
	// in the record.
	pc := lh.pc
	if !lh.read {
		pc = l.HolderPC()
	}
	if fromAt = pcRec(pc); fromAt != nil {
		if m.Flags.Load()&siteSeen == 0 {
			m.SetSiteOnce(&fromAt.pcs)
			m.Flags.Or(siteSeen)
		}
	}
	if len(lh.defs) != 0 {
		graphMu.Lock()
		found = drainNests(found)
		from := nodeOf(m)
		addNode(from, true)
		for _, d := range lh.defs {
			if d.to.Gone() {
				continue // collected since: its node has left the graph
			}
			to := nodeOf(d.to)
			addNode(to, false)
			if findEdge(from, to) != nil {
				continue
			}
			mode := exclusive
			if lh.read {
				mode |= readFrom
			}
			if d.read {
				mode |= readTo
			}
			e := newEdge(to)
			e.from, e.to, e.g, e.fromAt, e.toAt, e.mode, e.ordered = from, to, g, fromAt, d.at, mode, true
			if from.ord > to.ord || len(livePending) != 0 {
				found = placeEdge(found, e)
			}
			link(e)
		}
		graphMu.Unlock()
	}
	s.dropLone()
	return found
}

// deliverFound delivers the reports of the cycles in found.
func deliverFound(found []pending) {
	var reports []*Report
	for _, p := range found {
		if r := orderReport(p); r != nil {
			reports = append(reports, r)
		}
	}
	deliverAll(reports)
}

// loneStale reports whether s's lone record is stale by its epoch; the
// sweeper owns s.
//
//go:norace
func (s *gstate) loneStale() bool {
	return s.lone.addr != 0 && s.lone.epoch != orderEpoch.Load()
}

// lonePeriod is the least time between two of the sweeper's dumps for
// lone records (see the top of this file).
const lonePeriod = 500 * time.Millisecond

// lastLoneDump is when the sweeper last dumped for lone records; only
// the sweeper touches it, one sweep at a time.
var lastLoneDump time.Time

// sweepLone frees the gstates in suspects (the sweeper saw each holding
// only a lone record that an earlier sweep saw too) whose goroutine has
// exited, if a dump is due, and reports whether any of them stays
// claimed.
//
//go:norace
func sweepLone(suspects []*gstate) (claimed bool) {
	if len(suspects) == 0 {
		return false
	}
	n := runtime.NumGoroutine()
	spacing := lonePeriod
	if n > perDump {
		spacing = time.Duration(n) * lonePeriod / perDump
	}
	if !lastLoneDump.IsZero() && time.Since(lastLoneDump) < spacing {
		return true
	}
	lastLoneDump = time.Now()
	want := map[int64]bool{}
	for _, s := range suspects {
		if w := s.w.Load(); w&(busyBit|sweepBit) == 0 {
			want[w&gMask] = true
		}
	}
	alive := liveGoroutines(want)
	for _, s := range suspects {
		w := s.w.Load()
		g := w & gMask
		if w&(busyBit|sweepBit) != 0 || !want[g] || alive[g] || !s.w.CompareAndSwap(w, w|sweepBit) {
			claimed = true
			continue
		}
		// The dump began after the goroutine's last use of s: it has
		// exited with the lone lock held (IDs are not reused).
		s.dropLone()
		if len(s.held) > 0 {
			claimed = true
			s.w.Store(w)
			continue
		}
		s.free(g)
	}
	return claimed
}

// perDump is how many goroutines a dump of sweepLone covers every
// lonePeriod at most; with more, the dumps are spaced in proportion.
const perDump = 2000

// loneHolding is a lone record as Dump lists it.
type loneHolding struct {
	g    int64
	addr uintptr
	k    *core.Class
	read bool
}

// loneHeldNow returns the lone records of every goroutine, for Dump: a
// lock held alone has no Meta, so the registry that heldNow reads does
// not list it. Each gstate is read under sweepBit, as the sweeper reads
// it; one its goroutine is using right now is read once it is done.
//
//go:norace
func loneHeldNow() []loneHolding {
	var out []loneHolding
	visit := func(s *gstate) { loneHeldOf(s, &out) }
	for i := range gtable {
		visit(&gtable[i])
	}
	if overflowN.Load() != 0 {
		for i := range overflow {
			sh := &overflow[i]
			sh.mu.Lock()
			gs := make([]*gstate, 0, len(sh.m))
			for _, s := range sh.m {
				gs = append(gs, s)
			}
			sh.mu.Unlock()
			for _, s := range gs {
				visit(s)
			}
		}
	}
	return out
}

// loneHeldOf appends s's lone record to *out, for loneHeldNow.
//
//go:norace
func loneHeldOf(s *gstate, out *[]loneHolding) {
	for {
		w := s.w.Load()
		if w == 0 || w&idleBit != 0 {
			return // free, or idle: no lone record
		}
		if w&(busyBit|sweepBit) != 0 || !s.w.CompareAndSwap(w, w|sweepBit) {
			runtime.Gosched()
			continue
		}
		if lh := &s.lone; lh.addr != 0 && lh.epoch == orderEpoch.Load() {
			*out = append(*out, loneHolding{g: w & gMask, addr: lh.addr, k: lh.class, read: lh.read})
			if n := &lh.nest; n.held {
				*out = append(*out, loneHolding{g: w & gMask, addr: n.addr, k: n.class})
			}
		}
		s.w.Store(w)
		return
	}
}
