package detect

import (
	"slices"
	"sync/atomic"

	"github.com/locksmith-go/locksmith/internal/core"
)

// Read-write locks. An edge remembers whether its goroutine held from for
// reading or writing, and took to for reading or writing; an RWMonitor's
// re-entry (a reader reading again, the writer reading) adds no edge and
// no record, and a TryRLock, like a TryLock, adds no edge into the lock
// it took (later locks are still ordered after it). A read acquisition
// waits only for a writer, that is, for the writer that holds the lock or
// for one queued ahead of it (writer preference). So a cycle is a
// possible deadlock when, at every lock in it, the goroutine holding it or
// the one acquiring it is a writer, or a writer can queue there: the lock
// has been write-locked somewhere in Order mode by a write that can
// queue. A holding or acquiring side that is a write is itself such a
// write-locking (an acquisition that adds an edge can queue; a TryLock
// held while its goroutine takes another lock is counted by validate),
// so the rule comes down to one flag per lock (writeSeen): a cycle is
// reported when each of its locks has been write-locked (a Mutex or
// Monitor always has). A TryLock on its own never queues, so it holds
// out no reader and sets no flag. Two goroutines taking R(A) then R(B) and R(B)
// then R(A) share the locks harmlessly while nobody write-locks both; if
// some goroutine does, a writer queued on each lock holds out the other
// reader, and that is reported.
//
// An edge whose cycle has a lock never write-locked is kept outside the
// order like a reported one, and marked pending (the Pearce-Kelly order
// stays acyclic, and an edge that agrees with it still costs no search).
// If the first path the search found has such a lock, a second search
// looks for a path made only of write-locked locks (through ordered and
// pending edges) before the edge is left pending. The first write-lock of
// a read-write lock, while any edge is pending, searches for a cycle
// through that lock among write-locked locks along ordered and pending
// edges, and reports each one it finds then, by the goroutine that
// write-locked; its pending edges then leave the pending list, so each
// cycle is reported once. And a new edge that the order accepts may still
// close a cycle through a pending edge, among locks all write-locked
// (A -> X -> B with X only read, B -> A pending, then A -> C and C -> B):
// when pending edges lie in its way in the order (see viaPending), a
// search along ordered and pending edges through write-locked locks looks
// for it. These searches are not bounded by the order (pending edges go
// against it); they run only while a pending edge exists: at a lock's
// first write-lock, and for a new edge with a pending edge in its way.

// pendingN counts the pending edges (see the top of this file). It changes
// under graphMu, and is read without it by a read-write lock's first
// write-lock, which sets writeSeen before it loads pendingN, while
// validate increments pendingN before it reads the flags of a cycle's
// locks: one of the two sees the other.
var pendingN atomic.Int64

// livePending holds the pending edges whose two locks have both been
// write-locked; guarded by graphMu. Only those can lie on a cycle that a
// new edge closes through write-locked locks (see viaPending), so a new
// edge looks at them alone: a read-only inversion (both locks only ever
// read) costs later edges nothing. An edge enters when it is left
// pending with both locks written, or at the first write-lock of the
// last of its two (lateCycles); it leaves with its pending mark. The
// other pending edges are only counted (pendingN).
//
// Rejected alternative: one list of every pending edge, scanned by each
// new edge and searched to remove one; with the inversions of a sort
// whose comparator read-locks both items pending, every later new edge
// paid for all of them (BenchmarkOrderReadSort/fresh-nesting).
var livePending = map[*edge]struct{}{}

// dropPending takes e off the pending edges: it was reported, or is
// leaving the graph. graphMu is held.
func dropPending(e *edge) {
	e.pending = false
	delete(livePending, e)
	pendingN.Add(-1)
}

// liveAt runs markLive for m's node at m's first write-lock.
func liveAt(m *core.Meta) {
	graphMu.Lock()
	if n := nodeOf(m); n.ord != 0 {
		markLive(n)
	}
	graphMu.Unlock()
}

// markLive adds the pending edges of n whose other lock has been
// write-locked to livePending, at n's first write-lock; graphMu is held.
func markLive(n *node) {
	for _, e := range n.out {
		if e.pending && written(e.to.meta()) {
			livePending[e] = struct{}{}
		}
	}
	for _, e := range n.in {
		if e.pending && written(e.from.meta()) {
			livePending[e] = struct{}{}
		}
	}
}

// pending is a cycle found under graphMu, reported after it is released.
type pending struct {
	path    []edge // copies: the graph may change once graphMu is released
	closing edge
	// late is the read-write lock whose first write-lock, by goroutine
	// lateG, made the cycle reportable after it formed; nil otherwise.
	late  *core.Meta
	lateG int64
}

func newPending(path []*edge, closing *edge) pending {
	p := pending{path: make([]edge, len(path)), closing: *closing}
	for j, pe := range path {
		p.path[j] = *pe
	}
	return p
}

// validate adds the missing edges into m from the nearest lock s holds and
// from the ones above it it passes through (see passThrough; m acquired
// for reading if read), and returns the cycles any of them closes. s is
// g's gstate, busy. The edge from s's lone lock (lone.go), reached when
// every record passes through, is deferred to that lock's release.
//
//go:norace
func validate(g int64, s *gstate, m *core.Meta, at *stackRec, read bool) (found []pending) {
	var wrote []*core.Meta
	bottom := true // every record passes through: the lone lock is next
	graphMu.Lock()
	found = drainNests(found) // before any edge is placed: see nest.go
	to := nodeOf(m)
	addNode(to, false)
	for i := len(s.held) - 1; i >= 0; i-- {
		h := &s.held[i]
		if h.meta == m {
			continue
		}
		if h.stale(g) {
			s.remove(i)
			continue
		}
		from := nodeOf(h.meta)
		addNode(from, true)
		if h.try && unwrittenWrite(h) {
			h.meta.Flags.Or(writeSeen)
			markLive(from) // before the new edges look at livePending
			wrote = append(wrote, h.meta)
		}
		if findEdge(from, to) == nil {
			mode := exclusive
			if h.read {
				mode |= readFrom
			}
			if read {
				mode |= readTo
			}
			e := newEdge(to)
			e.from, e.to, e.g, e.fromAt, e.toAt, e.mode, e.ordered = from, to, g, heldAt(h, g), at, mode, true
			if from.ord > to.ord || len(livePending) != 0 {
				found = placeEdge(found, e)
			}
			link(e)
		}
		if !h.passThrough() {
			bottom = false
			break
		}
	}
	graphMu.Unlock()
	if bottom && s.lone.addr != 0 {
		s.deferEdge(m, at, read)
	}
	if wrote != nil {
		found = wroteUnder(found, wrote, g)
	}
	return found
}

// heldAt returns where g took the lock of h, a record of g's, for an
// edge from it: the record's stack, or, for a record with none (a lock
// taken with nothing held, after its first such acquisition, or along a
// known edge that was not the nearest), the PC the lock keeps of g's
// acquisition, as a one-frame record. g holds the lock (validate has
// dropped stale records), so that PC is g's own.
//
//go:norace
func heldAt(h *held, g int64) *stackRec {
	if h.at != nil {
		return h.at
	}
	m := h.meta
	return pcRec(holdPC(m.Lock(), m.Class, g, h.read))
}

// wroteUnder appends the cycles made reportable by the write holds in
// wrote, TryLocks under which g took another lock, now counted as
// write-locks (see writeSeen); validate has set their flags.
//
//go:noinline
func wroteUnder(found []pending, wrote []*core.Meta, g int64) []pending {
	for _, w := range wrote {
		if pendingN.Load() != 0 {
			found = append(found, lateCycles(w, g)...)
		}
	}
	return found
}

// placeEdge finds whether e, not yet linked, goes against the order or
// may close a cycle through a pending edge, and appends to found the
// cycle to report, if any. graphMu is held.
//
// It is kept out of validate, and e's fields are set one by one there,
// so that validate's frame stays small (192 bytes): a goroutine starts
// with a small stack. Rejected alternative: this code inline in validate,
// a 760-byte frame, which made a short-lived goroutine that nests a new
// lock under a held one grow and copy its stack, a large share of the
// CPU profile of go test -run '^$' -bench OrderShortLivedGoroutines/own
// -cpuprofile cpu.out ./detect (runtime.newstack and copystack).
//
//go:noinline
func placeEdge(found []pending, e *edge) []pending {
	var path []*edge
	searched := e.from.ord > e.to.ord
	if searched {
		path = reorder(e.from, e.to)
	}
	if path != nil {
		e.ordered = false
		if path = reportable(path, e); path != nil {
			found = append(found, newPending(path, e))
		}
	} else if path = viaPending(e); path != nil {
		searched = true
		found = append(found, newPending(path, e))
	}
	if searched {
		clearPath()
	}
	return found
}

// clearPath clears the searches' shared path scratch, whose edges must
// not stay reachable from there once they leave the graph (see
// lockState); a report has copied what it needs. graphMu is held.
func clearPath() { clear(path[:cap(path)]) }

// reportable returns path, the cycle that e (not yet linked) closes, if
// each of its locks has been write-locked; else another path from e.to to
// e.from through write-locked locks, if there is one; else nil, and e is
// left pending. graphMu is held.
func reportable(path []*edge, e *edge) []*edge {
	pendingN.Add(1)               // before the flags are read: see pendingN
	all := written(e.from.meta()) // the path's last lock; the loop sees the others
	for _, pe := range path {
		all = all && written(pe.from.meta())
	}
	switch {
	case all:
	case written(e.from.meta()) && written(e.to.meta()):
		path = writtenPath(e.to, e.from)
	default:
		path = nil
	}
	if path == nil {
		e.pending = true
		if written(e.from.meta()) && written(e.to.meta()) {
			livePending[e] = struct{}{}
		}
		return nil
	}
	pendingN.Add(-1)
	dropPendingOn(path)
	return path
}

// dropPendingOn takes the pending edges of path, a cycle being reported,
// off the pending list; graphMu is held.
func dropPendingOn(path []*edge) {
	for _, pe := range path {
		if pe.pending {
			dropPending(pe)
		}
	}
}

// viaPending returns a path e.to ->* e.from through write-locked locks
// that uses a pending edge, for a new edge e that the order accepted (so
// it closes no cycle of ordered edges), or nil. Such a cycle has formed
// only now if e's locks have been write-locked: it is reported now. Only
// pending edges between write-locked locks (livePending) can be on such
// a path, and the search runs only if one of them could be, going by
// the positions: its ordered stretches go up the order, so its first
// pending edge x -> y has ord(e.to) <= ord(x), and its last x' -> y' has
// ord(y') <= ord(e.from). A new edge thus costs no search while no
// pending edge lies in its way. graphMu is held.
func viaPending(e *edge) []*edge {
	if len(livePending) == 0 || !written(e.from.meta()) || !written(e.to.meta()) {
		return nil
	}
	first, last := false, false
	for p := range livePending {
		first = first || e.to.ord <= p.from.ord
		last = last || p.to.ord <= e.from.ord
	}
	if !first || !last {
		return nil
	}
	path := writtenPath(e.to, e.from)
	dropPendingOn(path)
	return path
}

// writtenPath returns a path start ->* goal of ordered and pending edges
// whose locks have all been write-locked, at least one edge long (start
// may be goal), or nil. graphMu is held; the path is in the shared
// scratch slice.
func writtenPath(start, goal *node) []*edge {
	searchMark += 2
	fm := searchMark
	fwdNodes = append(fwdNodes[:0], start)
	start.mark, start.via = fm, nil
	defer func() {
		visited += len(fwdNodes)
		dropVia(fwdNodes)
	}()
	for i := 0; i < len(fwdNodes); i++ {
		n := fwdNodes[i]
		for _, e := range n.out {
			if !e.ordered && !e.pending {
				continue
			}
			w := e.to
			if w == goal {
				path = append(path[:0], e)
				for v := n; v != start; v = v.via.from {
					path = append(path, v.via)
				}
				slices.Reverse(path)
				return path
			}
			if w.mark == fm || !written(w.meta()) {
				continue
			}
			w.mark, w.via = fm, e
			fwdNodes = append(fwdNodes, w)
		}
	}
	return nil
}

// lateCycles runs at m's first write-lock, by g, while edges are pending:
// it returns every cycle through m whose locks have now all been
// write-locked, each ending with one of its pending edges, and takes
// the pending edges on them off the pending list, so that no cycle is reported twice.
func lateCycles(m *core.Meta, g int64) (found []pending) {
	graphMu.Lock()
	defer graphMu.Unlock()
	found = drainNests(found)
	n := nodeOf(m)
	if n.ord == 0 {
		return found // not in the graph: on no cycle
	}
	markLive(n)
	for pendingN.Load() != 0 {
		cyc := writtenPath(n, n)
		if cyc == nil {
			break
		}
		// Any cycle has a pending edge: the ordered edges are acyclic.
		k := len(cyc) - 1
		for !cyc[k].pending {
			k--
		}
		rot := make([]*edge, 0, len(cyc))
		rot = append(append(rot, cyc[k+1:]...), cyc[:k+1]...)
		dropPendingOn(rot)
		clearPath()
		p := newPending(rot[:len(rot)-1], rot[len(rot)-1])
		p.late, p.lateG = m, g
		found = append(found, p)
	}
	return found
}

// orderReport builds the LockOrder report for the cycle that p.closing
// (from -> to) closes with p.path (to ->* from, edges already in the
// graph), each step saying where its goroutine acquired the lock it held
// (fromAt, if recorded) and the next one (toAt), and in which mode; or
// nil if the same problem was reported before (engine.go's note).
func orderReport(p pending) *Report {
	ids := make([]uint64, 0, len(p.path)+1)
	gs := make([]int64, 0, len(p.path)+1)
	r := &Report{Kind: LockOrder, Mode: Order}
	if p.late != nil {
		r.late = &lateWrite{lock: lockInfo(p.late), g: p.lateG}
	}
	for _, e := range append(p.path, p.closing) {
		ids = append(ids, e.from.meta().ID)
		gs = append(gs, e.g)
		var holdsAt []Frame
		if e.fromAt != nil {
			holdsAt = symbolise(e.fromAt.pcs)
		}
		r.Steps = append(r.Steps, Step{Goroutine: e.g, Holds: lockInfo(e.from.meta()), WaitsFor: lockInfo(e.to.meta()),
			HoldsForReading: e.mode&readFrom != 0, WaitsForReading: e.mode&readTo != 0,
			Stack: e.toAt.frames(), HoldsAt: holdsAt})
	}
	if !note(r, ids, gs) {
		return nil
	}
	return r
}
