package detect

// EdgeState is one edge of the lock-order graph, by lock IDs.
type EdgeState struct {
	From, To         uint64
	Ordered, Pending bool
	Bypass           bool
}

// OrderGraph returns the IDs of the locks in the lock-order graph and its
// edges.
func OrderGraph() (nodes map[uint64]bool, edges []EdgeState) {
	graphMu.Lock()
	defer graphMu.Unlock()
	nodes = map[uint64]bool{}
	for i := range graph.Len() {
		x := *graph.At(i)
		nodes[x.meta().ID] = true
		for _, e := range x.out {
			edges = append(edges, EdgeState{From: x.meta().ID, To: e.to.meta().ID, Ordered: e.ordered, Pending: e.pending, Bypass: e.bypass})
		}
	}
	return nodes, edges
}

// LateWrite reports whether r, a LockOrder report, was made at a
// read-write lock's first write-lock, and that lock's ID.
func LateWrite(r *Report) (uint64, bool) {
	if r.late == nil {
		return 0, false
	}
	return r.late.lock.ID, true
}

// MaxBypass bounds the bypass edges that forgetting one lock adds.
const MaxBypass = maxBypass
