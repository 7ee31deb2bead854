package detect

import (
	"runtime"
	"unsafe"

	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/fpstack"
)

// Nested first holds. A lock without Meta taken in Order mode by a
// goroutine whose only hold is a lone write record (lone.go) gets no Meta
// either: the goroutine keeps a nest record beside its lone one, and the
// edge from the lone lock to it waits in a slot of nests, a fixed table,
// until a drain puts it in the graph and makes both locks' Metas. So the
// first nesting of two new locks, as a cache's Get nests an entry's lock
// under the cache's, allocates nothing on the calling goroutine: suites
// that count the allocations of one call (testing.AllocsPerRun,
// runtime.MemStats) pass in Order mode as in the others.
//
// What the slot holds:
//   - while the outer lock is held: its address (no pointer: a lone
//     record keeps no lock reachable), and the inner lock, strongly until
//     a drain gives it its Meta (which holds it weakly);
//   - once the outer lock is released: the outer lock too (its release
//     has it), strongly until a drain.
//
// A drain makes the Metas, adds the edge and leaves only the inner Meta
// in the slot for as long as a nest record refers to it. Drains run under
// graphMu, before any other edge is placed (validate, releaseLone,
// lateCycles), before a lock in a slot gets its Meta on the Meta path,
// before Dump and WriteDOT read the graph, at every park (engine.Parked,
// in every mode), at each sweep, and in the drainer goroutine (see
// wakeDrainer), started by the release that makes a slot ready. Why that
// is exact: an edge that enters a slot's outer lock needs the lock's Meta
// and an acquisition of it under another lock, neither of which happens
// while the slot's goroutine holds it for writing; and once it is
// released, the next edge placed anywhere drains the slot first. The
// release is forwarded after the lock is free, so an edge into it can be
// placed between the two; the release then sees the lock's Meta and
// drains itself, reporting a cycle so closed as the release of a lone
// lock reports its deferred edges' (see releaseLone). A waiting edge
// closes no cycle either: no edge leads into a lock without
// Meta, and no two slots share a lock (tryNest falls back to the Meta
// path when a lock it nests is already in a slot), so a drain's edges are
// never reported. The inner lock, which an edge leads into, is marked
// (nestedInto) so that it gets no lone record until it has its Meta: a
// lone record's deferred edges are added at its release, which is exact
// only for a lock no edge leads into (lone.go).
//
// The strong pointers keep a lock reachable while its slot waits, which
// would hide a goroutine stuck on it from Go's goroutine leak profile;
// but a goroutine that waits for a lock parks, and every park drains
// first, so no goroutine waits on a lock a slot holds strongly.
//
// The nest record ends with the lone record: a release of the inner lock
// marks it released (the goroutine may take the same lock again, and
// then reuses the slot), the outer's release hands the slot over to be
// drained. A goroutine holding both that takes any other lock, or
// releases the outer first, materializes its nest record (see
// materializeNest): the inner lock gets its Meta and a held record, and
// the edge becomes one of the lone record's deferred edges, as if the
// inner lock had had a Meta when it was taken. A nesting of the same two
// locks whose slot waits to be drained reuses that slot. A lone record
// found stale (Order mode was left and entered again) drops the edge but
// keeps a held inner lock as a held record with its Meta, which can be
// checked as the lone one cannot (dropNest).
//
// Read holds, TryLock holds, an RWMonitor's locks (outer or inner: a
// downgraded write hold is shared, and edges can lead into it), race
// builds (a drain on one goroutine would order it after the nesting
// goroutine, hiding a data race between them) and builds whose holder PC
// is not cheap (fpstack.CheapCaller) take the Meta path. With every slot
// in use a nesting takes the Meta path too; nestSlots bounds what the
// table keeps alive. A drain that is not an edge's placement (a park,
// the drainer, a sweep) delivers what it finds without letting a
// reporter's panic through (deliverDrained): by the rules above it finds
// nothing, and if it did, no edge of the goroutine running it closed the
// cycle.

// nestHold is a goroutine's nest record; addr is 0 while it has none.
type nestHold struct {
	addr  uintptr
	class *core.Class // a class descriptor: never a lock
	pc    uintptr     // where the inner lock was taken
	slot  int32       // the slot of nests it refers to (pinned)
	held  bool        // the inner lock is held now
	own   bool        // the record opened the slot (else it reuses one)
}

// Slot states.
const (
	nestFree  = iota
	nestOpen  // the outer lock is held by the slot's goroutine
	nestReady // the outer lock was released: outer is set
	nestDone  // drained: only innerMeta is left, for the pins
)

// nestSlot is an edge from outer to inner waiting for a drain.
type nestSlot struct {
	state     uint8
	pins      int32  // nest records referring to the slot
	gen       uint32 // which use of the slot this is (nestGen)
	g         int64  // the goroutine that nested them
	outerAddr uintptr
	outer     *core.Lock
	outerK    *core.Class
	outerPC   uintptr
	innerAddr uintptr
	inner     *core.Lock
	innerMeta *core.Meta
	innerK    *core.Class
	// innerPCs[:innerN] is where the inner lock was taken, as capture
	// records it (fpstack.Record): a report's step names it, as it names
	// an acquisition on the Meta path.
	innerN   int32
	innerPCs [1 + 2 + stackDepth + 4]uintptr
}

// nestSlots is the size of the table. A slot costs 88 bytes of zero
// memory until used. The slots a drain has not reached yet are those of
// the nestings made since the drainer (nestDrainer) last ran; with one P
// (testing.AllocsPerRun sets GOMAXPROCS to 1) it runs only once the
// calling goroutine gives way, so 256 covers an AllocsPerRun of 100 runs
// that each nest two new locks. A nesting that finds no free slot takes
// the Meta path.
const nestSlots = 256

var (
	nests       [nestSlots]nestSlot
	nestHi      int     // slots at nestHi and beyond are free; guarded by nestMu
	nestMu      hbBool  // guards nests: a spin lock, hidden in race builds
	nestWaiters hbInt32 // goroutines spinning for nestMu
	nestDirty   hbInt32 // slots holding a lock strongly: a drain has work
	drainerOn   hbBool  // a drainer goroutine runs or is about to
	nestGen     uint32  // the last slot use's gen; guarded by nestMu
)

//go:norace
func lockNests() {
	if nestMu.CompareAndSwap(false, true) {
		return
	}
	nestWaiters.Add(1)
	for !nestMu.CompareAndSwap(false, true) {
		runtime.Gosched()
	}
	nestWaiters.Add(-1)
}

//go:norace
func unlockNests() { nestMu.Store(false) }

// unlockNestsYield is unlockNests for a drain, which then gives the
// processor to a goroutine that waited for nestMu (see drainNests).
//
//go:norace
func unlockNestsYield() {
	nestMu.Store(false)
	if nestWaiters.Load() != 0 {
		runtime.Gosched()
	}
}

// tryNest records g's acquisition of l, of class k, which has no Meta,
// as a nest record above s's lone record, and reports whether it did
// (see the top of this file). s is g's gstate, busy; tryNest leaves it
// if it made the record.
//
//go:norace
func tryNest(s *gstate, l *core.Lock, k *core.Class, g int64, try, read bool) bool {
	a := uintptr(unsafe.Pointer(l))
	lh := &s.lone
	if raceBuild || try || read || k.RW && k.Reentrant || len(s.held) != 0 || lh.addr == 0 || lh.addr == a ||
		lh.read || lh.try || lh.class.RW && lh.class.Reentrant || s.loneStale() {
		return false
	}
	n := &lh.nest
	if n.addr != 0 {
		if n.addr != a || n.held {
			return false
		}
		n.held = true // the same lock again, under the same hold
		n.pc = l.HolderPC()
		s.leave(g, 0)
		return true
	}
	pc := l.HolderPC()
	free := int32(-1)
	lockNests()
	for i := range nests[:nestHi] {
		e := &nests[i]
		switch {
		case e.state == nestFree:
			if free < 0 {
				free = int32(i)
			}
			continue
		case e.state == nestReady && e.inner == l && e.outerAddr == lh.addr:
			// The same nesting, waiting: the outer lock is alive (the
			// slot holds it), so the address is its.
			e.pins++
			unlockNests()
			*n = nestHold{addr: a, class: k, pc: pc, slot: int32(i), held: true}
			s.leave(g, 0)
			return true
		case e.outerAddr == lh.addr || e.outerAddr == a || e.innerAddr == lh.addr || e.innerAddr == a:
			unlockNests() // a lock in a slot already: see the top of this file
			return false
		}
	}
	if free < 0 {
		if nestHi == nestSlots {
			unlockNests()
			return false
		}
		free = int32(nestHi)
		nestHi++
	}
	e := &nests[free]
	nestGen++
	if nestGen == 0 {
		nestGen = 1 // 0 is a free slot's
	}
	e.state, e.pins, e.g, e.gen = nestOpen, 1, g, nestGen
	e.outerAddr, e.outerK = lh.addr, lh.class
	e.innerAddr, e.inner, e.innerK = a, l, k
	l.OrSeen(nestedInto) // no lone record for l until it has its Meta
	// 2: tryNest and Acquired (or AcquiredRW), as capture leaves out
	// itself, acquire and Acquired.
	e.innerN = int32(fpstack.Record(2, e.innerPCs[:]))
	nestDirty.Add(1)
	raceReleaseSlot(e)
	unlockNests()
	*n = nestHold{addr: a, class: k, pc: pc, slot: free, held: true, own: true}
	s.leave(g, 0)
	return true
}

// releaseNested ends g's hold of the inner lock of s's nest record if l
// is that lock, and reports whether it was; s is g's gstate, busy.
//
//go:norace
func (s *gstate) releaseNested(l *core.Lock) bool {
	n := &s.lone.nest
	if n.addr != uintptr(unsafe.Pointer(l)) || !n.held {
		return false
	}
	n.held = false
	return true
}

// handOffNest ends s's nest record at the release of the lone lock l:
// the slot, if the record opened it, becomes ready for a drain, with l
// and where it was taken. s is busy. The caller (releaseLone) then looks
// whether l has a Meta, and drains itself if it has (see there).
//
//go:norace
func (s *gstate) handOffNest(l *core.Lock) {
	n := &s.lone.nest
	lockNests()
	e := &nests[n.slot]
	if n.own && e.state == nestOpen {
		e.state, e.outer, e.outerPC = nestReady, l, l.HolderPC()
		if e.inner == nil { // a drain has given the inner lock its Meta
			nestDirty.Add(1)
		}
		raceReleaseSlot(e)
	}
	e.pins--
	freeIfDone(e)
	unlockNests()
	*n = nestHold{}
	wakeDrainer()
}

// dropNest forgets s's nest record without its edge, for dropLone: the
// lone record is stale, so the outer lock's release is not seen. If keep,
// an inner lock the record says is held stays recorded, as a held record
// with its Meta, which the usual checks (held.stale) verify: a record of
// a lock with Meta can be asked whether it is still held, a lone one
// cannot. s is busy, or the sweeper's.
//
//go:norace
func (s *gstate) dropNest(keep bool) {
	n := &s.lone.nest
	if keep && n.held {
		s.materialize(false)
		return
	}
	lockNests()
	e := &nests[n.slot]
	if n.own && e.state == nestOpen {
		if e.inner != nil {
			nestDirty.Add(-1)
		}
		freeSlot(e)
	} else {
		e.pins--
		freeIfDone(e)
	}
	unlockNests()
	*n = nestHold{}
}

// freeIfDone frees e if it is drained and no record refers to it;
// nestMu is held.
//
//go:norace
func freeIfDone(e *nestSlot) {
	if e.state == nestDone && e.pins == 0 {
		freeSlot(e)
	}
}

// freeSlot frees e, and lowers nestHi past the free slots at its top;
// nestMu is held.
//
//go:norace
func freeSlot(e *nestSlot) {
	*e = nestSlot{}
	for nestHi > 0 && nests[nestHi-1].state == nestFree {
		nestHi--
	}
}

// materializeNest turns s's nest record, whose inner lock g holds, into
// a held record of the lock with its Meta, and its waiting edge into one
// of the lone record's deferred edges (or leaves it to its slot's drain,
// if the slot was made by an earlier hold of the lone lock). g takes
// another lock, or releases the lone lock first. s is busy.
//
//go:norace
func (s *gstate) materializeNest(g int64) { s.materialize(true) }

// materialize is materializeNest; without edge, the waiting edge is
// dropped (the lone record is stale: see dropNest). s is busy, or the
// sweeper's.
//
//go:norace
func (s *gstate) materialize(edge bool) {
	n := &s.lone.nest
	lockNests()
	e := &nests[n.slot]
	m, l := e.innerMeta, e.inner
	unlockNests()
	if m == nil {
		m = l.Meta(e.innerK) // the slot holds l: it is alive
	} else {
		core.RaceAcquireMeta(m) // made by a drain
	}
	var at *stackRec
	if n.own {
		at = intern(e.innerPCs[:e.innerN]) // pinned: nobody writes it
	} else {
		at = pcRec(n.pc) // the slot's stack is another hold's
	}
	siteRec(m, at)
	own := false
	lockNests()
	if e.inner != nil {
		e.inner, e.innerMeta = nil, m
		if e.state == nestOpen { // else ready: still dirty, for outer
			nestDirty.Add(-1)
		}
	}
	if n.own && e.state == nestOpen {
		own = true
		freeSlot(e) // the edge goes to the lone record instead
	} else {
		e.pins--
		freeIfDone(e)
	}
	unlockNests()
	*n = nestHold{}
	s.held = append(s.held, held{meta: m, at: at})
	if own && edge {
		s.lone.defs = append(s.lone.defs, deferredEdge{to: m, at: at})
	}
}

// drainNests puts the waiting edges in the graph, making their locks'
// Metas, and gives the inner locks of open slots theirs, so that no slot
// holds a lock strongly; graphMu is held, so drains run one at a time. It
// returns found with the cycles the edges close (none: see the top of
// this file).
//
// It holds nestMu twice, briefly: to copy the slots with work, and to
// record what it did; never while it makes Metas or edges, and it gives
// the processor away after each hold that a goroutine waited for. So a
// goroutine nesting locks never runs a drain's allocations on its time:
// with one P (testing.AllocsPerRun), a drainer preempted while it held
// nestMu gets the P only to release it.
//
//go:norace
func drainNests(found []pending) []pending {
	for more := true; more && nestDirty.Load() != 0; {
		n := int(nestDirty.Load()) + 4
		ws := make([]nestSlot, 0, n)
		idx := make([]int, 0, n)
		more = false
		lockNests()
		for i := range nests[:nestHi] {
			if e := &nests[i]; e.dirty() {
				if len(ws) == cap(ws) {
					more = true // made dirty since the count: another round
					break
				}
				raceAcquireSlot(e)
				ws = append(ws, *e)
				idx = append(idx, i)
			}
		}
		unlockNestsYield()
		for k := range ws {
			w := &ws[k]
			if w.innerMeta == nil {
				w.innerMeta = w.inner.Meta(w.innerK)
			}
			if w.state == nestReady {
				found = drainEdge(found, w, w.innerMeta)
			}
		}
		lockNests()
		for k, i := range idx {
			w, e := &ws[k], &nests[i]
			if e.gen != w.gen {
				continue // freed meanwhile: its lock has its Meta all the same
			}
			was := e.dirty()
			if e.inner != nil {
				e.inner, e.innerMeta = nil, w.innerMeta
			}
			if w.state == nestReady {
				e.state, e.outer = nestDone, nil // only drains leave nestReady
			}
			if was && !e.dirty() {
				nestDirty.Add(-1)
			}
			freeIfDone(e)
		}
		unlockNestsYield()
	}
	return found
}

// dirty reports whether e holds a lock strongly; nestMu is held.
//
//go:norace
func (e *nestSlot) dirty() bool { return e.inner != nil || e.state == nestReady }

// drainEdge adds the edge of w, a copy of a ready slot, whose inner lock's
// Meta is im, to the graph; graphMu is held.
//
//go:norace
func drainEdge(found []pending, w *nestSlot, im *core.Meta) []pending {
	om := w.outer.Meta(w.outerK)
	fromAt, toAt := siteRec(om, pcRec(w.outerPC)), siteRec(im, intern(w.innerPCs[:w.innerN]))
	from, to := nodeOf(om), nodeOf(im)
	addNode(from, true)
	addNode(to, false)
	if findEdge(from, to) != nil {
		return found
	}
	ed := newEdge(to)
	ed.from, ed.to, ed.g, ed.fromAt, ed.toAt, ed.mode, ed.ordered = from, to, w.g, fromAt, toAt, exclusive, true
	if from.ord > to.ord || len(livePending) != 0 {
		found = placeEdge(found, ed)
	}
	link(ed)
	return found
}

// siteRec returns at, and records it as m's first-lock site if m has
// none.
func siteRec(m *core.Meta, at *stackRec) *stackRec {
	if at != nil && m.Flags.Load()&siteSeen == 0 {
		m.SetSiteOnce(&at.pcs)
		m.Flags.Or(siteSeen)
	}
	return at
}

// drainNestsNow drains under graphMu for the callers that place no edge
// of their own (a park, a sweep, the drainer, Dump, and Acquired before
// it makes a lock's Meta), and returns what the drain found for
// deliverDrained.
func drainNestsNow() (found []pending) {
	if nestDirty.Load() == 0 {
		return nil
	}
	graphMu.Lock()
	found = drainNests(nil)
	graphMu.Unlock()
	return found
}

// deliverDrained delivers the cycles that a drain outside any edge's
// placement found, where the goroutine has left its gstate. None is
// expected (see the top of this file); one that is found closed no edge
// of the goroutine running the drain, so a reporter's panic (as
// PanicReporter's for an inversion) is recovered and the report printed,
// instead of failing an acquisition or a park that made no inversion.
func deliverDrained(found []pending) {
	for _, p := range found {
		r := orderReport(p)
		if r == nil {
			continue
		}
		func() {
			defer func() {
				if v := recover(); v != nil {
					PrintReporter(r)
				}
			}()
			deliver(r)
		}()
	}
}

// wakeDrainer starts a drainer goroutine if slots wait for a drain and
// none runs. It is started from the release that made a slot ready, so
// that the locks a slot holds are soon held only weakly, and their Metas
// and edge are made off the calling goroutine: the go statement reuses
// an exited goroutine's descriptor, which a test binary has by then, and
// allocates nothing the calling goroutine counts. The drainer exits once
// no slot waits: it leaves nothing for goleak or the leak profile to
// see.
//
//go:norace
func wakeDrainer() {
	if nestDirty.Load() != 0 && drainerOn.CompareAndSwap(false, true) {
		go nestDrainer()
	}
}

//go:norace
func nestDrainer() {
	for {
		deliverDrained(drainNestsNow())
		drainerOn.Store(false)
		if nestDirty.Load() == 0 || !drainerOn.CompareAndSwap(false, true) {
			return
		}
	}
}
