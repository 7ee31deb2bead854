package detect

import "github.com/locksmith-go/locksmith/internal/core"

// maxBypass bounds the bypass edges that forgetting one lock adds.
const maxBypass = 4096

var region []*node // forgetRegion's scratch, guarded by graphMu

// forgetOrder drops the collected locks ms from the graph (those made by
// NewMeta), under one hold of graphMu.
func forgetOrder(ms []*core.Meta) {
	graphMu.Lock()
	defer graphMu.Unlock()
	for _, m := range ms {
		if m.Engined() {
			forgetRegion(nodeOf(m))
		}
	}
}

// forgetRegion drops a collected lock from the graph, together with every
// lock being forgotten with it that is connected to it through such locks
// (the registry's scan marks every Meta it found collected gone before it
// calls Forget; Gone is an atomic load, cheaper than asking each weak
// pointer): the region. Each path through the region between two
// live locks (p -> ... -> s) is kept as a bypass edge p -> s, so that the
// order it implied outlives it: with edges only from the nearest held
// lock, a lock in the middle of a nesting carries the order of the locks
// around it. At most maxBypass bypass edges per lock of the region are
// added.
//
// A path through a read-write lock never write-locked is not kept: it is
// no dependency (a reader waits only for a writer; see passThrough), and
// the lock, collected, never will be write-locked. Its bypass would hide
// the lock that made the path harmless, and a cycle closed through it
// would be reported as one of write-locked locks.
//
// Rejected alternative: bypassing each lock on its own, as it is
// forgotten, from every predecessor to every successor. A whole structure of
// locks collected at once then grows its transitive closure while it is
// being forgotten: in BenchmarkOrderTransfers, many times the edges the
// graph held before.
func forgetRegion(n *node) {
	if n.ord == 0 {
		return // not in the graph
	}
	searchMark += 2
	gone := searchMark
	region = append(region[:0], n)
	n.gone = gone
	for i := 0; i < len(region); i++ {
		x := region[i]
		for _, e := range x.out {
			if w := e.to; w.gone != gone && w.meta().Gone() {
				w.gone = gone
				region = append(region, w)
			}
		}
		for _, e := range x.in {
			if w := e.from; w.gone != gone && w.meta().Gone() {
				w.gone = gone
				region = append(region, w)
			}
		}
	}
	budget := maxBypass * len(region)
	for _, x := range region {
		if !written(x.meta()) {
			continue // no path through it is kept (see above)
		}
		for _, in := range x.in {
			if p := in.from; in.ordered && p.gone != gone {
				budget = bypass(p, x, in.fromAt, in.mode&readFrom, gone, budget)
			}
		}
	}
	for _, x := range region {
		for len(x.out) > 0 {
			unlink(x.out[len(x.out)-1])
		}
		for len(x.in) > 0 {
			unlink(x.in[len(x.in)-1])
		}
		dropNode(x)
	}
	clear(region)
}

// bypass adds p -> s for every live s that the region (locks marked gone)
// leads to from x, which p has an ordered edge into (p acquired at
// fromAt, in fromMode), through write-locked locks, and returns the budget
// left.
func bypass(p, x *node, fromAt *stackRec, fromMode edgeMode, gone uint64, budget int) int {
	searchMark += 2
	seen := searchMark
	fwdNodes = append(fwdNodes[:0], x)
	x.mark = seen
	for i := 0; i < len(fwdNodes) && budget > 0; i++ {
		for _, out := range fwdNodes[i].out {
			s := out.to
			if !out.ordered || s.mark == seen {
				continue
			}
			s.mark = seen
			if s.gone == gone {
				if written(s.meta()) {
					fwdNodes = append(fwdNodes, s)
				}
				continue
			}
			if s == p || findEdge(p, s) != nil {
				continue
			}
			// p < x <=* s in the order, so the new edge agrees with it.
			e := newEdge(s)
			*e = edge{from: p, to: s, g: out.g, fromAt: fromAt, toAt: out.toAt, mode: fromMode | out.mode&readTo, ordered: true, bypass: true}
			link(e)
			if budget--; budget == 0 {
				break
			}
		}
	}
	clear(fwdNodes)
	return budget
}
