package detect

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/locksmith-go/locksmith/internal/chunked"
	"github.com/locksmith-go/locksmith/internal/core"
)

// The lock-order graph.

// The graph is guarded by graphMu, which is taken only to add an edge not
// seen before, to forget a collected lock, and by Dump and WriteDOT.
var (
	graphMu sync.Mutex
	// graph lists the locks in the graph (a node's gi is its index).
	// Rejected alternatives: a map by ID, whose inserts and deletes, as
	// locks are made and collected in waves, showed as a large share of
	// the CPU profile of nesting a new pair of locks (go test -run '^$'
	// -bench MutexFirstNesting -cpuprofile cpu.out ./bench/detectcost);
	// a slice, which copied itself
	// as it grew (see package chunked).
	graph chunked.List[*node]
	// lo and hi are the lowest and highest positions given out: a lock
	// new to the graph goes ordGap beyond one end, where no edge into it
	// (or out of it) can be against the order. ordGap leaves room for
	// about 2^39 locks at each end.
	lo, hi int64
	// byPos finds the lock at a position off the ordGap grid, so that a
	// renumbering into a gap can check that the positions it picks are
	// free. Positions on the grid are those given out by addNode, and
	// intoGap never picks one (it picks odd positions): a lock that never
	// moves costs no map insert and delete, a large share of the CPU
	// profile of nesting a new pair of locks (as for graph, above).
	byPos = map[int64]*node{}
)

const ordGap = 1 << 24

// lockState is a lock's detection state: core's Meta and the node of the
// order graph, side by side, 256 bytes. The Meta must stay the first
// field: nodeOf and node.meta convert between the two.
//
// lockStates are carved out of slabs of slabSize (see NewMeta): a lock
// gets the next slot of the current slab, and a slot is never handed out
// twice, so no stale *core.Meta (a held record, a pending report) can
// ever alias another lock's state. A slab is freed by the collector once
// no Meta in it is referenced any more, so one live lock keeps at most
// slabSize-1 dead lockStates' memory (14 x 256 bytes) alive with its own,
// and little else: forgetting a lock drops its node's edges and search
// pointers (dropNode, dropVia), so a dead slot leads the collector only
// to its own name, first-lock and first-wait stacks, lost-holds record
// and weak handle, none of which leads further.
//
// Rejected alternatives: a lockState per allocation, one allocation more
// per lock (4 instead of 2 per pair of new locks nested,
// BenchmarkOrderFirstNesting) and more objects for the collector to
// sweep; a free list of slots, which would let a stale *core.Meta alias
// a new lock; a node allocated on first use and found through a map or a
// field of Meta, an allocation and a lookup more per lock, for code whose
// objects each carry their own lock.
type lockState struct {
	meta core.Meta
	node node
}

// The Meta is the first field of lockState: nodeOf converts a *core.Meta
// to its *lockState. This line fails to compile if it is not (an array
// of length Offsetof is not [0]struct{}).
var _ [unsafe.Offsetof(lockState{}.meta)]struct{} = [0]struct{}{}

// slabSize is how many lockStates one allocation holds: 15 of them and
// the cursor, 3848 bytes, fit the 4096-byte size class (273 bytes a
// lock); 16 would take the 4864-byte class (304 bytes a lock). Larger
// slabs save little more (the allocation is already amortised to a
// fifteenth) and let one live lock keep more dead lockStates' memory.
const slabSize = 15

type lockSlab struct {
	next   atomic.Int32 // the next free slot; slabSize or more when full
	states [slabSize]lockState
}

// curSlab is the slab NewMeta hands slots out of.
var curSlab atomic.Pointer[lockSlab]

func (engine) NewMeta() *core.Meta {
	for {
		sl := curSlab.Load()
		if sl != nil {
			if i := sl.next.Add(1) - 1; i < slabSize {
				return &sl.states[i].meta
			}
		}
		// Full (or none yet): start a new slab with its first slot taken.
		// A racing NewMeta that installed one first wins; this slab is
		// dropped unused.
		nsl := new(lockSlab)
		nsl.next.Store(1)
		if curSlab.CompareAndSwap(sl, nsl) {
			return &nsl.states[0].meta
		}
	}
}

// nodeOffset is where a lockState's node lies, from its Meta.
const nodeOffset = unsafe.Offsetof(lockState{}.node)

// meta returns the Meta of n's lock: n is the node of a lockState, which
// begins with the Meta. Rejected alternative: a field that points back,
// 8 bytes more in every lock's state.
func (n *node) meta() *core.Meta {
	return (*core.Meta)(unsafe.Add(unsafe.Pointer(n), -int(nodeOffset)))
}

// nodeOf returns m's node. Every Meta comes from NewMeta once package
// detect is initialised (it installs the engine in init, before any lock
// can need metadata).
func nodeOf(m *core.Meta) *node { return &(*lockState)(unsafe.Pointer(m)).node }

// node is a lock in the graph. Guarded by graphMu.
type node struct {
	ord int64   // position in the topological order; 0 while not in the graph
	gi  int     // index in graph, while in the graph
	out []*edge // edges from this lock, ordered or not
	in  []*edge // edges into this lock
	// Inline room for the first edge out of and into this lock, and for
	// the first edge into it, so that a pair of locks nested for the
	// first time allocates nothing for its edge.
	out1, in1 [1]*edge
	first     edge
	// firstFrom and firstAt publish first, which is not in edgeSet, for
	// lookups without graphMu (edgeAt): the ID of its from lock (0 while
	// first is unused) and its toAt. Atomic; written under graphMu.
	firstFrom atomic.Uint64
	firstAt   core.Pointer[stackRec]
	// Search state, meaningful while mark is the current search's.
	mark uint64
	via  *edge  // the edge the forward search came in by
	gone uint64 // marks the region forgetRegion is dropping
}

// edgeMode says how the edge's goroutine held from and acquired to: bits
// for a read hold of a read-write lock; exclusive is write on both sides
// (and every edge between a Mutex and a Monitor).
type edgeMode uint8

const (
	exclusive edgeMode = 0
	readFrom  edgeMode = 1 // from was held for reading
	readTo    edgeMode = 2 // to was acquired for reading
)

// edge is from -> to: goroutine g acquired to at toAt while holding from,
// which it had acquired at fromAt (nil: where from was first locked).
// Immutable once published, except the positions and pending, guarded by
// graphMu.
type edge struct {
	from, to *node
	g        int64
	fromAt   *stackRec
	toAt     *stackRec
	mode     edgeMode
	ordered  bool // part of the topological order (see the top of topo.go)
	pending  bool // closes a cycle that has a lock never write-locked; not ordered
	bypass   bool // stands for a path through a lock since collected
	// Positions: in from.out, in to.in, in edgeSet's table. int32 keeps
	// the edge, held inline in every lock's node, at 56 bytes.
	iout, iin, slot int32
}

// addNode puts n into the graph, at the low end if it is to be an edge's
// source, at the high end if a target.
func addNode(n *node, asSource bool) {
	if n.ord != 0 {
		return
	}
	if asSource {
		lo -= ordGap
		n.ord = lo
	} else {
		hi += ordGap
		n.ord = hi
	}
	n.out, n.in = n.out1[:0], n.in1[:0]
	n.gi = graph.Len()
	graph.Append(n)
}

// dropNode takes n, with no edges left, out of the graph.
func dropNode(n *node) {
	if moved := graph.RemoveSwap(n.gi); moved != nil {
		(*moved).gi = n.gi
	}
	if n.ord%ordGap != 0 {
		delete(byPos, n.ord)
	}
	n.out, n.in, n.ord, n.via = nil, nil, 0, nil
	clear(n.out1[:]) // nothing in a dropped node leads to another lock's slab
	clear(n.in1[:])
}

// The edges of the graph are found without graphMu (edgeAt, for every
// nesting along a known edge) in two places: the edge a lock's node holds
// inline (first, published by firstFrom and firstAt), and edgeSet for
// every other. A pair of new locks nested for the first time thus costs
// no insert into the table, nor a removal when the locks are collected:
// the table is larger than the cache, and its inserts and removes, a
// cache miss each at least, were a large share of the CPU profile of
// that nesting (go test -run '^$' -bench
// 'MutexFirstNesting/mutex.Mutex/order' -cpuprofile cpu.out
// ./bench/detectcost, then go tool pprof -top cpu.out). A lock nested
// under several others still puts its further in-edges in the table.
//
// Rejected alternative: publishing a pointer to first. An edge found
// without graphMu is read after the lookup, and first is cleared and
// reused once its edge leaves the graph; firstFrom and firstAt are all
// that a lookup reads, atomically.

// firstEdges counts the edges held in nodes' first; guarded by graphMu.
var firstEdges int

// edgeAt reports, without graphMu, whether the graph has the edge
// from -> to, and the stack recorded where to was acquired along it. A
// lock that no edge in the table enters (inTable clear) costs no probe.
// An edge held inline costs two atomic loads to find, one in the table
// five (firstFrom, the flags, and the table's three; under the race
// detector each is a call into the race runtime: go test -race -run '^$'
// -bench MutexNestedPair ./bench/detectcost). The stack read after
// firstFrom matched is that edge's: first changes only when its edge
// leaves the graph, that is when one of its locks, both held or being
// acquired by the caller, has been forgotten (a lock revived by a
// finalizer), and then the stack is that of another edge into the same
// lock, as a lookup in the table racing with a removal may find.
//
// Rejected alternatives for the inline edge: publishing its from ID and
// stack together behind one pointer (a load less) costs an allocation
// per new edge, one per goroutine that nests a lock of its own; a record
// that keeps the edge's from ID and reads the stack only when it needs
// it (a new edge out of the lock, a report) would lose the stack once
// the edge leaves the graph, while the record's lock is still held.
//
// edgeAt and edgeSet.get are built without checkptr's instrumentation
// (go:nocheckptr), which the race detector turns on: nodeOf's and
// node.meta's conversions (a lockState begins with its Meta) would each
// look up the heap object at both ends of the value converted to
// (checkptrAlignment), for every nested acquisition. core.Pointer's
// comment has the figures.
//
//go:nocheckptr
func edgeAt(from, to *core.Meta) (*stackRec, bool) {
	n := nodeOf(to)
	if n.firstFrom.Load() == from.ID {
		return n.firstAt.Load(), true
	}
	if to.Flags.Load()&inTable == 0 {
		return nil, false
	}
	if e := edgeSet.get(from.ID, to.ID); e != nil {
		return e.toAt, true
	}
	return nil, false
}

// findEdge returns the edge from -> to, or nil; graphMu is held. A short
// list of edges into to is searched directly.
func findEdge(from, to *node) *edge {
	if len(to.in) <= 4 {
		for _, e := range to.in {
			if e.from == from {
				return e
			}
		}
		return nil
	}
	if to.first.to != nil && to.first.from == from {
		return &to.first
	}
	return edgeSet.get(from.meta().ID, to.meta().ID)
}

// edgeCount returns the number of edges in the graph; graphMu is held.
func edgeCount() int { return firstEdges + edgeSet.count() }

// link adds e to both ends' lists, and publishes it for edgeAt.
func link(e *edge) {
	e.iout = int32(len(e.from.out))
	e.from.out = appendEdge(e.from.out, &e.from.out1, e)
	e.iin = int32(len(e.to.in))
	e.to.in = appendEdge(e.to.in, &e.to.in1, e)
	if to := e.to; e == &to.first {
		firstEdges++
		to.firstAt.Store(e.toAt)
		to.firstFrom.Store(e.from.meta().ID) // after firstAt: see edgeAt
		return
	}
	if f := e.to.meta().Flags.Load(); f&inTable == 0 {
		e.to.meta().Flags.Or(inTable)
	}
	edgeSet.add(e)
}

// appendEdge appends e to list; when that moves list off its node's
// inline array, the array is cleared, so that it keeps no edge (and no
// other lock's slab) reachable once the edge has left the graph.
func appendEdge(list []*edge, inline *[1]*edge, e *edge) []*edge {
	grown := append(list, e)
	if len(list) == len(inline) && &list[0] == &inline[0] {
		clear(inline[:])
	}
	return grown
}

// unlink removes e from both ends' lists and from where edgeAt finds it.
func unlink(e *edge) {
	out := e.from.out
	last := out[len(out)-1]
	out[e.iout], last.iout = last, e.iout
	out[len(out)-1] = nil
	e.from.out = out[:len(out)-1]
	in := e.to.in
	last = in[len(in)-1]
	in[e.iin], last.iin = last, e.iin
	in[len(in)-1] = nil
	e.to.in = in[:len(in)-1]
	if e.pending {
		dropPending(e)
	}
	if to := e.to; e == &to.first {
		firstEdges--
		to.firstFrom.Store(0)
		to.first = edge{}
		return
	}
	edgeSet.remove(e)
}

// newEdge returns storage for an edge into to: to's inline edge if free.
func newEdge(to *node) *edge {
	if to.first.to == nil {
		return &to.first
	}
	return new(edge)
}
