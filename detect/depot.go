package detect

import "github.com/locksmith-go/locksmith/internal/fpstack"

// A stackRec is an interned stack (program counters), immutable. Edges
// and held records point to them: the same acquisition site, reached by
// the same path, costs one record however many locks it takes. The depot
// keeps every distinct stack for the life of the program, as lockdep's
// stack depot does; distinct stacks are bounded by the program's code
// paths (stackDepth frames deep at most).
type stackRec struct {
	pcs  []uintptr // an fpstack record
	next *stackRec // same-hash chain
}

// stackDepth is how many frames a captured stack keeps, after those of
// the detector and the lock method.
const stackDepth = 32

// capture returns the interned stack of the acquisition being recorded,
// as an fpstack record: from core.Acquired (or core.AcquiredRW) up, the
// lock method and its callers. The frames above it (capture, acquire and
// engine.Acquired or AcquiredRW) are left out by Frames.
//
// The stack is taken by following frame pointers (fpstack.Record) rather
// than by runtime.Callers, which unwinds through the runtime's tables and
// expands inlined calls as it goes, once for each new lock's first-lock
// site and once for each new edge (shared when the edge is into a new
// lock): BenchmarkRecord compares the two (go test -run '^$' -bench
// Record ./internal/fpstack). With runtime.Callers in Record's place
// that was a large share of the CPU profile of the first nesting of
// a pair of new locks; with Record, capture (walk and intern) is a small
// share of it (go test -run '^$' -bench
// 'OrderFirstNesting/mutex.Mutex/order' -cpuprofile cpu.out ./detect).
// fpstack says what the walk reads, and how Frames
// gives reports the frames runtime.Callers would. Capturing fewer frames
// would cut the reports' stacks. A lock-class design (lockdep's: one node
// per class of locks, named by where the lock was made) would capture
// once per class rather than once per instance.
func capture() *stackRec {
	// 3: the frames left out; 4 words for wrapper frames, which Record
	// records and Frames leaves out.
	var buf [1 + 3 + stackDepth + 4]uintptr
	n := fpstack.Record(3, buf[:])
	return intern(buf[:n])
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
