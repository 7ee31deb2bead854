package detect

import "sync"

// EdgeReads reports whether the lock-order graph has the edge a -> b and,
// if so, whether its goroutine held a and took b for reading.
func EdgeReads(a, b sync.Locker) (fromRead, toRead, ok bool) {
	ma, mb := adapt(a).Lock.PeekMeta(), adapt(b).Lock.PeekMeta()
	if ma == nil || mb == nil {
		return false, false, false
	}
	graphMu.Lock()
	defer graphMu.Unlock()
	e := findEdge(nodeOf(ma), nodeOf(mb))
	if e == nil {
		return false, false, false
	}
	return e.mode&readFrom != 0, e.mode&readTo != 0, true
}

// PendingEdges returns the number of edges that close a cycle of locks
// not all write-locked yet.
func PendingEdges() int64 { return pendingN.Load() }
