package detect

import (
	"cmp"
	"slices"
)

// The graph keeps a topological order of its locks (every edge a -> b has
// ord(a) < ord(b)), maintained by Pearce and Kelly's dynamic algorithm
// ("A dynamic topological sort algorithm for directed acyclic graphs",
// 2006). A new edge that agrees with the order goes in without any
// search. Only an edge against the order searches, and only among the
// locks whose position lies between its two ends: forward from the new
// edge's target, backward from its source. If the forward search meets
// the source, the edge closes a cycle and is reported; otherwise the
// locks found are renumbered within the positions they already used.
//
// The search runs under graphMu while the caller holds its locks. It is
// bounded by the region between the two ends, not by the graph, and (see
// reorder) by about twice the smaller of its two halves. With 10,000
// locks and 200,000 random transfers each taking two of them in ID order,
// BenchmarkOrderTransfers reports the share of new edges that go against
// the order (searches/edge), the locks their searches visit
// (visited/search), and how a transfer late in the run, once the graph is
// large, costs against one early on, where most locks are new and most of
// the cost is the stack recorded for the new edge (cpu-last/first; go
// test -run '^$' -bench OrderTransfers -benchtime 1x -count 2 ./detect):
// the searches stay small as the graph grows. Nothing else happens
// under graphMu on a lock's path: an edge seen before is found without a
// lock (edgeAt: in its target's node, or in the hash table edgeSet), so
// repeated nestings take no lock.
//
// Rejected alternatives: searching a snapshot of the graph, so that no
// lock is held during the search, costs a copy per search and still needs
// the insertion to be serialised and re-checked; a search from scratch
// for every new edge (breadth first over the whole reachable graph) grew
// with the graph, to orders of magnitude more per transfer in the
// benchmark above.
//
// An edge that closes a cycle is kept, so that it is not reported again,
// but outside the order (not ordered): searches do not follow it. A cycle
// that could only be closed through such an edge is therefore not
// reported; each of those runs through an inversion already reported.
// (lockdep stops checking altogether after its first report.)

// Search state, guarded by graphMu: reused so that searches allocate
// nothing once warm.
var (
	searchMark       uint64
	path             []*edge
	fwdNodes, bwdSet []*node
	ords             []int64
	searches         int // edges against the order, for benchmarks
	visited          int // nodes the searches visited, for benchmarks
)

// dropVia clears a forward search's scratch list and the edges its
// locks were reached by: a via left set could keep an edge alive after it
// leaves the graph, and with it the slabs of the locks at its ends (see
// lockState).
func dropVia(ns []*node) {
	for _, n := range ns {
		n.via = nil
	}
	clear(ns)
}

// reorder handles a new edge x -> y against the order (ord(y) < ord(x)).
// It returns the path y ->* x if there is one: the edge would close a
// cycle, and the order is left unchanged. Otherwise it changes positions
// so that the edge agrees with the order.
//
// Only locks whose position lies between ord(y) and ord(x) can be on such
// a path or need to move: those reachable from y (forward) and those that
// reach x (backward). The two searches advance in turn, one lock each, and
// stop as soon as either side is complete, which settles the question of
// a cycle (a path y ->* x lies wholly in both sets). The complete side is
// then moved past the other end into the gap beside it, if the gap has
// room: the locks that reach x go just below y, or the locks y reaches go
// just above x, keeping their own order. Positions are spaced (ordGap
// apart when a lock joins the graph) so that gaps usually have room. If
// not, the other search is finished and both sets are renumbered within
// the positions they already use, as Pearce and Kelly's algorithm does.
// The work is thus about twice the smaller of the two sets, not their sum.
func reorder(x, y *node) []*edge {
	lb, ub := y.ord, x.ord
	searches++
	searchMark += 2
	fm, bm := searchMark, searchMark+1
	fwdNodes = append(fwdNodes[:0], y)
	y.mark, y.via = fm, nil
	bwdSet = append(bwdSet[:0], x)
	x.mark = bm
	fi, bi := 0, 0
	defer func() {
		visited += len(fwdNodes) + len(bwdSet)
		dropVia(fwdNodes)
		clear(bwdSet)
	}()
	// stepF expands one forward lock; it returns the cycle if it meets x.
	stepF := func() []*edge {
		n := fwdNodes[fi]
		fi++
		for _, e := range n.out {
			if !e.ordered {
				continue
			}
			w := e.to
			if w == x {
				path = append(path[:0], e)
				for v := n; v.via != nil; v = v.via.from {
					path = append(path, v.via)
				}
				slices.Reverse(path)
				return path
			}
			if w.mark == fm || w.ord > ub {
				continue
			}
			w.mark, w.via = fm, e
			fwdNodes = append(fwdNodes, w)
		}
		return nil
	}
	// stepB expands one backward lock; it reports whether it met y.
	stepB := func() bool {
		n := bwdSet[bi]
		bi++
		for _, e := range n.in {
			w := e.from
			if !e.ordered || w.mark == bm || w.ord < lb {
				continue
			}
			if w == y {
				return true
			}
			w.mark = bm
			bwdSet = append(bwdSet, w)
		}
		return false
	}
	for fi < len(fwdNodes) && bi < len(bwdSet) {
		if p := stepF(); p != nil {
			return p
		}
		if bi < len(bwdSet) && stepB() {
			// A cycle: finish forward for its path, which then exists.
			for fi < len(fwdNodes) {
				if p := stepF(); p != nil {
					return p
				}
			}
		}
	}
	if bi == len(bwdSet) && intoGap(bwdSet, bm, true, lb) {
		return nil
	}
	if fi == len(fwdNodes) && intoGap(fwdNodes, fm, false, ub) {
		return nil
	}
	for fi < len(fwdNodes) {
		if p := stepF(); p != nil {
			return p
		}
	}
	for bi < len(bwdSet) {
		stepB()
	}
	byOrd := func(a, b *node) int { return cmp.Compare(a.ord, b.ord) }
	slices.SortFunc(fwdNodes, byOrd)
	slices.SortFunc(bwdSet, byOrd)
	ords = ords[:0]
	for _, n := range bwdSet {
		ords = append(ords, n.ord)
	}
	for _, n := range fwdNodes {
		ords = append(ords, n.ord)
	}
	slices.Sort(ords)
	for i, n := range bwdSet {
		setOrd(n, ords[i])
	}
	for i, n := range fwdNodes {
		setOrd(n, ords[len(bwdSet)+i])
	}
	return nil
}

// intoGap moves set (the complete backward set, below, or forward set,
// above; mark identifies its members) into the free positions next to
// end (ord(y) or ord(x)), keeping its own order, and reports whether
// there was room: positions strictly between end and the nearest
// position of a lock outside the set that must stay on the far side (a
// predecessor of the set, below; a successor, above), none of them in
// use. The positions are odd, so off the ordGap grid (see byPos).
func intoGap(set []*node, mark uint64, below bool, end int64) bool {
	bound := end
	if below {
		bound = lo // the lowest position: every predecessor is above it
		for _, n := range set {
			for _, e := range n.in {
				if e.ordered && e.from.mark != mark {
					bound = max(bound, e.from.ord)
				}
			}
		}
	} else {
		bound = hi
		for _, n := range set {
			for _, e := range n.out {
				if e.ordered && e.to.mark != mark {
					bound = min(bound, e.to.ord)
				}
			}
		}
	}
	a, b := min(bound, end), max(bound, end) // the open interval (a, b)
	k := int64(len(set))
	step := (b - a) / (k + 1)
	if step < 2 {
		return false
	}
	// a+step*i | 1 is a+step*i or the next position, still below the
	// next pick and below b, since step >= 2.
	for i := int64(1); i <= k; i++ {
		if _, used := byPos[(a+step*i)|1]; used {
			return false
		}
	}
	slices.SortFunc(set, func(p, q *node) int { return cmp.Compare(p.ord, q.ord) })
	for i, n := range set {
		setOrd(n, (a+step*int64(i+1))|1)
	}
	return true
}

// setOrd moves n to position o, which is free or being vacated by the
// same renumbering.
func setOrd(n *node, o int64) {
	if n.ord%ordGap != 0 && byPos[n.ord] == n {
		delete(byPos, n.ord)
	}
	n.ord = o
	if o%ordGap != 0 {
		byPos[o] = n
	}
}
