package detect

import (
	"runtime"
	"slices"
	"sync"
)

// A stackRec is an interned stack (program counters), immutable. Edges
// and held records point to them: the same acquisition site, reached by
// the same path, costs one record however many locks it takes. The depot
// keeps every distinct stack for the life of the program, as lockdep's
// stack depot does; distinct stacks are bounded by the program's code
// paths (32 frames deep at most).
type stackRec struct {
	pcs  []uintptr
	next *stackRec // same-hash chain
}

var depot struct {
	mu sync.Mutex
	m  map[uint64]*stackRec
}

// capture returns the interned stack of capture's caller's caller's
// caller: the lock method that called core.Acquired, and above.
//
// runtime.Callers is the largest cost of nesting a pair of new lock
// instances: it unwinds frame by frame through the runtime's tables (about
// a microsecond for a test's stack of a dozen frames), once for each new
// lock's first-lock site and once for the new edge (shared when the edge
// is into a new lock), 38 % of the CPU profile of the first nesting
// (bench/detectcost BenchmarkMutexFirstNesting). Frame-pointer unwinding
// would cost a few nanoseconds a frame, but needs assembly per
// architecture and is unsafe where C frames are on the stack (cgo
// callbacks), which the runtime's own frame-pointer unwinder checks for
// with state a library cannot see. Capturing fewer frames would cut the
// reports' stacks. A lock-class design (lockdep's: one node per class of
// locks, named by where the lock was made) would capture once per class
// rather than once per instance.
func capture() *stackRec {
	var buf [32]uintptr
	n := runtime.Callers(4, buf[:])
	return intern(buf[:n])
}

func intern(pcs []uintptr) *stackRec {
	h := uint64(len(pcs))
	for _, pc := range pcs {
		h = mix(h, uint64(pc))
	}
	depot.mu.Lock()
	defer depot.mu.Unlock()
	for r := depot.m[h]; r != nil; r = r.next {
		if slices.Equal(r.pcs, pcs) {
			return r
		}
	}
	if depot.m == nil {
		depot.m = map[uint64]*stackRec{}
	}
	r := &stackRec{pcs: slices.Clone(pcs), next: depot.m[h]}
	depot.m[h] = r
	return r
}

func (r *stackRec) frames() []Frame {
	if r == nil {
		return symbolise(nil)
	}
	return symbolise(r.pcs)
}

func mix(h, x uint64) uint64 {
	// splitmix64 finaliser over the running hash and the next word.
	h ^= x + 0x9e3779b97f4a7c15
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}
