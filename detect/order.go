package detect

import (
	"unsafe"

	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/fpstack"
)

// Order mode keeps, per goroutine, the stack of locks it holds, and one
// global lock-order graph: an edge a -> b means some goroutine acquired b
// while holding a, that is, the program relies on a < b ("a must be
// acquired before b"). An acquisition that would add an edge closing a
// cycle is a possible deadlock and is reported.
//
// As lockdep does, an acquisition adds an edge only from the nearest lock
// the goroutine holds (the last one it took and still holds), plus any
// lock above that one taken by TryLock or TryRLock or held for reading
// and never write-locked (see passThrough); transitivity covers the rest:
// holding a, b, c and taking d records c -> d, and a -> b -> c -> d
// already says a < d. So the graph grows with the pairs of locks actually
// nested, not with the square of the locks held at once (2,000 locks
// taken in order make 1,999 edges, not 2 million).

// Acquisition and release.

// Bits of core.Meta.Flags.
const (
	// aloneSeen: the lock was acquired in Order mode by a goroutine that
	// held no other lock.
	aloneSeen = 1
	// writeSeen: a read-write lock was write-locked in Order mode by an
	// acquisition that can queue (Lock, LockContext, LockTimeout with a
	// positive timeout), or held for writing while its goroutine took
	// another lock (see validate). A TryLock alone never sets it: a
	// writer that never queues holds out no reader. A lock without Meta
	// keeps it in its own word (core.Lock.OrSeen) until it gets one.
	writeSeen = 2
	// siteSeen: the lock's first-lock site is recorded (Meta.SetSiteOnce).
	siteSeen = 4
	// inTable: an edge into the lock has been put in edgeSet (it may have
	// left since). Set under graphMu before the edge is published there,
	// so that a lock without it has no edge in the table to look up (see
	// edgeAt).
	inTable = 8
	// nestedInto: the lock was taken without Meta under a lone lock, and
	// the edge into it left waiting in a slot (nest.go). Set on the lock
	// itself (core.Lock.OrSeen): until a drain gives it its Meta, it must
	// not get a lone record, whose deferred edges assume that no edge
	// leads into the lock (lone.go).
	nestedInto = 16
)

// written reports whether the lock can make a reader wait: a Mutex or a
// Monitor, or a read-write lock write-locked in Order mode.
func written(m *core.Meta) bool { return !m.Class.RW || m.Flags.Load()&writeSeen != 0 }

// Acquired records that g acquired l. A lock without Meta taken by a
// goroutine that holds nothing gets a lone record and nothing else
// (lone.go). Otherwise the stack of the acquisition (a walk of the frame
// pointers and a lookup in the depot, see capture) is recorded, in the
// held record and for reports, only when the acquisition is the first of
// its kind: the lock's first acquisition with Meta, its first by a
// goroutine holding nothing, and an acquisition that adds an edge. An acquisition along a known edge takes the stack recorded with
// the edge. Inversions are made of new edges, usually of new lock
// instances, so the records a report needs are usually there.
//
// A Meta found gone (its lock revived by a finalizer) is replaced by the
// lock's new one in acquire, where no known edge leads into it: a gone
// Meta has no edges left, so the check costs an acquisition along a known
// edge no atomic load, and any other acquisition none but the load of
// the lock's flags that it makes anyway (core.FlagGone is one of them).
func (*engine) Acquired(l *core.Lock, k *core.Class, g int64, try bool) (report func()) {
	var drained []pending
	m := l.PeekMeta() // inlined, unlike Meta
	s := enter(g, true)
	if m == nil {
		// The lone path names a lock's site from the PC its fast paths
		// keep, which only a frame-pointer walk makes cheap enough to
		// keep (fpstack.CheapCaller): elsewhere (purego, before go1.23) a
		// lock gets its state on its first acquisition, as it must for
		// its reports to name where it was taken.
		if fpstack.CheapCaller && (tryLone(s, l, k, g, try, false) || tryNest(s, l, k, g, try, false)) {
			return nil
		}
		drained = drainNestsNow() // l may be in a slot: its site is the slot's (nest.go)
		m = l.Meta(k)
	}
	report = acquire(s, l, k, m, g, try, false, false)
	if drained != nil {
		deliverDrained(drained) // s is left
	}
	return report
}

// AcquiredRW records that g acquired the read-write lock l (its writer
// lock), for reading if read. An RWMonitor's re-entry records nothing;
// only a reentrant class is asked about it (a mutex.RWMutex panics on
// any re-entry before it gets here). The lock's first write-lock that can
// queue (try false) sets writeSeen and, if an edge is pending, looks for
// the cycles it makes reportable.
//
// A lock without Meta taken by a goroutine that holds nothing gets a lone
// record and no Meta (lone.go); a write-lock that can queue then sets
// writeSeen on the lock itself, which its Meta inherits. Otherwise a
// read takes the Meta as Acquired does (a gone one is replaced in
// acquire), a write through Meta, which replaces a gone one first, so
// that writeSeen lands on the Meta the acquisition records. Each atomic
// load left out is a call into the race runtime less under the race
// detector, a share of what a read pair costs there (go test -race -run
// '^$' -bench 'OrderRWNestedPair' ./detect).
func (*engine) AcquiredRW(l *core.Lock, k *core.Class, g int64, try, read bool) (report func()) {
	late := false
	var drained []pending
	var m *core.Meta
	if read && k.Reentrant {
		if rw := core.RWOf(l, k); rw.Writer() == g || rw.HoldsRead(g) > 1 {
			return nil // re-entry: it waits for nobody
		}
	}
	if m = l.PeekMeta(); m == nil && !read && !try && l.SeenFlags()&writeSeen == 0 {
		l.OrSeen(writeSeen)
		m = l.PeekMeta() // see OrSeen
	}
	s := enter(g, true)
	if m == nil {
		if fpstack.CheapCaller && (tryLone(s, l, k, g, try, read) || tryNest(s, l, k, g, try, read)) {
			return nil
		}
		drained = drainNestsNow() // as in Acquired
		m = l.Meta(k)
	} else if !read {
		m = l.Meta(k)
	}
	if !read && !try && m.Flags.Load()&writeSeen == 0 {
		m.Flags.Or(writeSeen)
		late = pendingN.Load() != 0
	}
	report = acquire(s, l, k, m, g, try, read, late)
	if drained != nil {
		deliverDrained(drained) // s is left
	}
	return report
}

// acquire records g's acquisition of l, of class k, whose Meta is m (see
// Acquired); s is g's gstate, busy; late says that it is a read-write
// lock's first write-lock with edges pending. It returns the delivery of
// the reports it found, or nil.
//
//go:norace
func acquire(s *gstate, l *core.Lock, k *core.Class, m *core.Meta, g int64, try, read, late bool) (report func()) {
	// hs is s.held, read once: under the race detector each read of a
	// field costs a call into the race runtime.
	hs := s.held
	lone := s.lone.addr != 0
	if lone && (s.lone.addr == m.Addr || s.loneStale()) {
		// Stale: the lock is taken again, or Order mode was left since
		// the record was made, so it was released unseen (or may have
		// been); edges from it would be false.
		s.dropStaleLone()
		lone = false
		hs = s.held // a held inner lock of its nest record stays: see dropNest
	}
	if lone && s.lone.nest.held {
		s.materializeNest(g) // the lock taken now is nested under its inner lock
		hs = s.held
	}
	var (
		known bool
		miss  bool
		at    *stackRec
		found []pending
	)
	if late {
		liveAt(m) // before validate: its new edges look at livePending
	}
	if (len(hs) > 0 || lone) && !try {
		at, known, miss = nearest(s, hs, m)
	}
	if !known { // else a known edge into m: m has its site, and at is the edge's
		f := m.Flags.Load() // core's FlagGone with this package's bits: one load
		if f&core.FlagGone != 0 {
			m = l.Meta(k)
			f = m.Flags.Load()
		}
		alone := len(hs) == 0 && !lone
		if miss || f&siteSeen == 0 || alone && f&aloneSeen == 0 {
			at = capture()
			var set uint32 // the flags to set, in one atomic operation
			if f&siteSeen == 0 {
				m.SetSiteOnce(&at.pcs)
				set |= siteSeen
			}
			if alone && f&aloneSeen == 0 {
				set |= aloneSeen
			}
			if set != 0 {
				m.Flags.Or(set)
			}
			if miss {
				found = validate(g, s, m, at, read)
				hs = s.held // validate drops stale records
			}
		}
	}
	hs = append(hs, held{meta: m, at: at, try: try, read: read})
	s.held = hs
	if len(hs) > 2*s.checked+16 {
		s.drop(g)
		hs = s.held
	}
	s.leave(g, len(hs))
	if late {
		found = append(found, lateCycles(m, g)...)
	}
	// Reported only after s is left: a reporter may take locks, which
	// needs s.
	if len(found) == 0 {
		return nil
	}
	return func() { deliverFound(found) }
}

// heldPCs returns where goroutine g acquired the lock with the given ID,
// if its held record has the stack. The caller must know that g's records
// do not change meanwhile (g is parked in a deadlock, or is the caller);
// the sweeper is kept out while they are read.
//
//go:norace
func heldPCs(g int64, id uint64) []uintptr {
	s := lookup(g)
	if s == nil || !s.w.CompareAndSwap(g, g|sweepBit) {
		return nil
	}
	defer s.w.Store(g)
	for i := len(s.held) - 1; i >= 0; i-- {
		if s.held[i].meta.ID == id { // a lone record has no stack: not found
			if at := s.held[i].at; at != nil {
				return copyPCs(at.pcs)
			}
			return nil
		}
	}
	return nil
}

// passThrough reports whether an acquisition also adds an edge from the
// held lock below h: h was taken by TryLock or TryRLock (no edge into it
// carries the order of the locks below), or is a read hold of a lock
// never write-locked. Transitivity through such a lock does not hold for
// the report rule: holding W(x), R(y) and taking W(z), with y only ever
// read, makes x -> y -> z, a path through a lock that holds out nobody,
// while x -> z is a dependency between two write-locked locks. A read
// hold of a lock already write-locked keeps the path usable (the flag is
// never cleared), so nested readers of such locks still add one edge each.
//
//go:norace
func (h *held) passThrough() bool { return h.try || h.read && !written(h.meta) }

// unwrittenWrite reports whether h is a write hold, taken by TryLock, of
// a read-write lock without writeSeen: an acquisition under it sends the
// goroutine to validate, which sets the flag (a writer holding the lock
// while it waits for another holds out the lock's readers).
//
//go:norace
func unwrittenWrite(h *held) bool { return !h.read && !written(h.meta) }

// nearest looks up, lock-free, the edges into m from the nearest lock in
// hs (the held records of s, a goroutine's, busy) and the try-locked ones
// (and unwritten read holds) above it, and from s's lone lock when every
// record passes through (see loneEdge). It reports whether one of them is missing; if
// none is, it reports the nearest lock's edge known, with the stack
// recorded with it. A record whose edge is missing may be stale:
// validate, which the caller runs then, drops it, so it sends the
// goroutine to validate once. (Checking here would cost every new edge a
// load of the lock's weak pointer and owner more.)
//
//go:norace
func nearest(s *gstate, hs []held, m *core.Meta) (at *stackRec, known, miss bool) {
	for i := len(hs) - 1; i >= 0; i-- {
		h := &hs[i]
		hm := h.meta
		if hm == m {
			continue // a stale record of the lock being taken
		}
		a, ok := edgeAt(hm, m)
		if !ok || h.try && unwrittenWrite(h) {
			return nil, false, true
		}
		if !h.passThrough() {
			return a, true, false
		}
	}
	return s.loneEdge(m)
}

// Released drops g's record of l. It finds the record by the lock's
// address (Meta.Addr) rather than by l's Meta, which would cost an atomic
// load more: two locks alive together have different addresses, and a
// record whose lock was collected (another lock may be at its address
// now) is stale, and dropped all the same. A lone record (lone.go) is
// found by its address too; its deferred edges enter the graph then.
//
//go:norace
func (*engine) Released(l *core.Lock, g int64) {
	s := enterHeld(g)
	if s == nil {
		return // taken before Order mode was on
	}
	a := uintptr(unsafe.Pointer(l))
	hs := s.held // read once (see acquire)
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].meta.Addr == a {
			last := len(hs) - 1
			if i < last {
				shiftHeld(hs, i)
			}
			hs[last] = held{}
			hs = hs[:last]
			s.held = hs
			s.leave(g, len(hs))
			return
		}
	}
	var found []pending
	if s.lone.addr == a {
		found = releaseLone(s, l, g) // may add a held record: see materializeNest
	} else {
		s.releaseNested(l)
	}
	s.leave(g, len(s.held))
	if found != nil {
		deliverFound(found)
	}
}

// ReleasedRW drops g's record of the read-write lock l once g holds it in
// neither mode, and marks it held for reading when g keeps only read
// holds (an RWMonitor's writer that read-locked, then unlocked). A
// goroutine holds a non-reentrant class's lock once, in one mode, so its
// release drops the record without asking the lock (see AcquiredRW).
//
//go:norace
func (*engine) ReleasedRW(l *core.Lock, g int64, read bool) {
	m := l.PeekMeta()
	s := enterHeld(g)
	if s == nil {
		return // taken before Order mode was on
	}
	if m != nil {
		// s.held and m.Class are read once: under the race detector each
		// read of a field is a call into the race runtime, and this loop
		// is the costliest of Order mode's frames in a suite of lone
		// read-write pairs (groupcache's, go run ./cmd/suitecost in bench).
		hs, k := s.held, m.Class
		for i := len(hs) - 1; i >= 0; i-- {
			if hs[i].meta != m {
				continue
			}
			rw := core.RWOf(l, k)
			switch {
			case !k.Reentrant:
				s.remove(i)
			case rw.Writer() == g:
				// A read hold of the writer: still held for writing.
			case rw.HoldsRead(g) > 0:
				hs[i].read = true
			default:
				s.remove(i)
			}
			s.leave(g, len(s.held))
			return
		}
	}
	var found []pending
	if lh := &s.lone; lh.addr == uintptr(unsafe.Pointer(l)) {
		rw := core.RWOf(l, lh.class)
		switch {
		case !lh.class.Reentrant:
			found = releaseLone(s, l, g)
		case rw.Writer() == g:
			// A read hold of the writer: still held for writing.
		case rw.HoldsRead(g) > 0:
			lh.read = true
		default:
			found = releaseLone(s, l, g)
		}
	} else {
		s.releaseNested(l)
	}
	s.leave(g, len(s.held))
	if found != nil {
		deliverFound(found)
	}
}
