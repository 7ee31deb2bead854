package detect

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/locksmith-go/locksmith/internal/core"
)

// held is one lock a goroutine holds. It names the lock by its Meta, which
// holds the lock only weakly: a record never keeps a lock alive.
type held struct {
	meta *core.Meta
	at   *stackRec // where it was acquired, or nil: the lock's first-lock site
	try  bool      // taken by TryLock or TryRLock: no edge into it
	read bool      // a read-write lock held for reading only
}

// gstate is what one goroutine holds, in the order taken.
//
// w is the goroutine's ID, or 0 when the gstate is free, plus three
// flags: busyBit while the goroutine itself reads or changes held,
// sweepBit while the sweeper (or another goroutine's claim) does, idleBit
// while held is empty and nobody uses it. Each sets its flag by
// CompareAndSwap from the ID with no other flag but idleBit, so exactly
// one of them touches held at a time, and that CompareAndSwap orders its
// accesses after the previous user's.
type gstate struct {
	w    atomic.Int64
	held []held
	// checked is len(held) after the last staleness check (see drop).
	checked int
	_       [24]byte // one cache line per gstate in gtable
}

const (
	busyBit  = 1 << 62
	sweepBit = 1 << 61
	idleBit  = 1 << 60
	gMask    = idleBit - 1
)

// gtable finds a goroutine's gstate without a lock: open addressing on the
// goroutine ID over gstates held in the table itself (256 KiB of zero
// memory until used), each free (w == 0) or claimed by one goroutine, so
// that a probe is one atomic load. A goroutine claims a slot when it takes
// its first lock, and keeps it, idle, when it releases its last: the next
// acquisition finds it with the same one CompareAndSwap that marks it busy,
// where freeing it and claiming it again cost a clearing, the sweeper's
// arming and the overflow check per first lock and last unlock (a fifth
// of the CPU profile of an uncontended Lock/Unlock pair in Order mode).
// An idle slot is free to take for any goroutine whose own probes find no
// free slot, so short-lived goroutines that release what they take do not
// fill the table: the goroutines that need slots are those holding locks
// now. Goroutines beyond what the probe limit finds go to sharded maps
// under mutexes.
//
// A goroutine that exits holding a lock, or releases a lock while Order
// mode is off, leaves its records behind. The sweeper, run once per
// garbage collection while any gstate is claimed, drops every record whose
// lock has been collected or is no longer held by the record's goroutine,
// and frees gstates left empty or idle: their memory stays flat however
// many goroutines exit holding locks.
//
// A goroutine with no gstate probes maxProbe slots to learn it: 4
// keeps that cheap (32 slots, each a pointer and a word to load, cost
// every short-lived goroutine 64 atomic loads per acquisition and per
// release, slow under the race detector), and with 4096 slots the table
// still finds nearly every goroutine until hundreds hold locks at once.
//
// Rejected alternative: a sharded map under a mutex per shard for every
// lookup, which cost two atomic read-modify-writes per acquisition and
// per release (two nested locks in Order mode, as go test -run '^$'
// -bench MutexNestedPair ./bench/detectcost measures them, took 145 ns
// against 85 ns with this table on an AMD EPYC).
const (
	gslots         = 4096
	maxProbe       = 4
	overflowShards = 64
)

var (
	gtable    [gslots]gstate
	overflowN atomic.Int32
	overflow  [overflowShards]struct {
		mu sync.Mutex
		m  map[int64]*gstate
		_  [48]byte // keep shards on separate cache lines
	}
)

// lookup returns g's gstate, or nil.
func lookup(g int64) *gstate {
	s, _ := probe(g)
	return s
}

// enter returns g's gstate marked busy, or nil if g has none and !create.
// The usual case, g's gstate in its first slot, is inlined.
func enter(g int64, create bool) *gstate {
	s := &gtable[uint64(g)%gslots]
	if w := s.w.Load(); w&^idleBit != g || !s.w.CompareAndSwap(w, g|busyBit) {
		s = enterSlow(g, create)
	}
	return s
}

func enterSlow(g int64, create bool) *gstate {
	for {
		s, free := probe(g)
		if s == nil {
			if !create {
				return nil
			}
			if free != nil && free.w.CompareAndSwap(0, g|busyBit) {
				armSweep()
				return free
			}
			return claim(g)
		}
		w := s.w.Load()
		if w&^idleBit == g && s.w.CompareAndSwap(w, g|busyBit) {
			return s
		}
		// The sweeper or a claim holds it for a moment, or has taken it.
		for s.w.Load()&sweepBit != 0 {
			runtime.Gosched()
		}
	}
}

// probe is lookup that also returns the first free slot of g's probe
// sequence, if any, seen in the same loads: a goroutine's first lock
// claims it without probing again (each probe is an atomic load, which
// costs 50 to 200 ns under the race detector, a cost every short-lived
// goroutine pays).
func probe(g int64) (s, free *gstate) {
	base := uint64(g)
	for p := uint64(0); p < maxProbe; p++ {
		x := &gtable[(base+p)%gslots]
		switch w := x.w.Load(); {
		case w&gMask == g:
			return x, nil
		case w == 0 && free == nil:
			free = x
		}
	}
	if overflowN.Load() == 0 {
		return nil, free
	}
	sh := &overflow[uint64(g)%overflowShards]
	sh.mu.Lock()
	s = sh.m[g]
	sh.mu.Unlock()
	return s, free
}

// leave ends g's use of s, which stays g's: idle if g holds nothing.
func (s *gstate) leave(g int64) {
	if len(s.held) > 0 {
		s.w.Store(g)
		return
	}
	s.checked = 0
	s.w.Store(g | idleBit)
}

// free empties s and makes it available; its user (the sweeper, with
// sweepBit set) calls it.
func (s *gstate) free(g int64) {
	if cap(s.held) > 64 {
		s.held = nil
	} else {
		clear(s.held[:cap(s.held)])
		s.held = s.held[:0]
	}
	s.checked = 0
	if overflowN.Load() != 0 {
		sh := &overflow[uint64(g)%overflowShards]
		sh.mu.Lock()
		if sh.m[g] == s {
			delete(sh.m, g)
			overflowN.Add(-1)
		}
		sh.mu.Unlock()
	}
	s.w.Store(0)
}

// claim gives g, which has no gstate, one marked busy: a free slot of
// its probe sequence, else an idle one taken from its goroutine (which
// finds it gone and claims anew when it next takes a lock), else a new
// gstate in the overflow maps.
func claim(g int64) *gstate {
	armSweep()
	base := uint64(g)
	for p := uint64(0); p < maxProbe; p++ {
		if s := &gtable[(base+p)%gslots]; s.w.Load() == 0 && s.w.CompareAndSwap(0, g|busyBit) {
			return s
		}
	}
	for p := uint64(0); p < maxProbe; p++ {
		s := &gtable[(base+p)%gslots]
		if w := s.w.Load(); w&(idleBit|busyBit|sweepBit) == idleBit && s.w.CompareAndSwap(w, g|busyBit) {
			// Idle: held is empty and cleared (remove clears what it
			// vacates), so s is g's as it is.
			return s
		}
	}
	s := &gstate{}
	s.w.Store(g | busyBit)
	sh := &overflow[uint64(g)%overflowShards]
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = map[int64]*gstate{}
	}
	sh.m[g] = s
	overflowN.Add(1)
	sh.mu.Unlock()
	return s
}

// stale reports whether h no longer describes a lock g holds: the lock
// was collected, or released while Order mode was off (or by a path that
// did not report it).
func (h *held) stale(g int64) bool {
	l := h.meta.Lock()
	if l == nil {
		return true
	}
	if h.read {
		return !core.RWOf(l, h.meta.Class).HoldsReadNow(g)
	}
	return l.Owner() != g
}

// remove deletes record i; the vacated slot is cleared.
func (s *gstate) remove(i int) {
	last := len(s.held) - 1
	if i < last {
		copy(s.held[i:], s.held[i+1:])
	}
	s.held[last] = held{}
	s.held = s.held[:last]
}

// drop removes every stale record. Acquired calls it when the stack has
// doubled since the last check, so that records left by releases the
// detector did not see cannot pile up.
func (s *gstate) drop(g int64) {
	for i := len(s.held) - 1; i >= 0; i-- {
		if s.held[i].stale(g) {
			s.remove(i)
		}
	}
	s.checked = len(s.held)
}

// The sweeper runs from a cleanup attached to a throw-away object, that is
// once per garbage collection, while any gstate is claimed.
var sweepArmed atomic.Bool

type gcTick struct{ _ *byte } // a pointer, so that it is not a tiny allocation

func armSweep() {
	if sweepArmed.Load() || !sweepArmed.CompareAndSwap(false, true) {
		return
	}
	runtime.AddCleanup(&gcTick{}, sweepTick, 0)
}

func sweepTick(int) {
	sweepArmed.Store(false)
	if sweep() {
		armSweep()
	}
}

// sweep drops stale records from every gstate that its goroutine is not
// using right now, frees those left empty, and reports whether any gstate
// is still claimed.
func sweep() (claimed bool) {
	visit := func(s *gstate) (freed bool) {
		w := s.w.Load()
		if w == 0 {
			return false
		}
		if w&(busyBit|sweepBit) != 0 || !s.w.CompareAndSwap(w, w|sweepBit) {
			claimed = true
			return false
		}
		s.drop(w &^ idleBit)
		if len(s.held) > 0 {
			claimed = true
			s.w.Store(w)
			return false
		}
		s.free(w &^ idleBit)
		return true
	}
	for i := range gtable {
		visit(&gtable[i])
	}
	if overflowN.Load() == 0 {
		return claimed
	}
	for i := range overflow {
		sh := &overflow[i]
		sh.mu.Lock()
		var gs []*gstate
		for _, s := range sh.m {
			gs = append(gs, s)
		}
		sh.mu.Unlock()
		for _, s := range gs {
			visit(s) // free takes the shard's mutex
		}
	}
	return claimed
}
