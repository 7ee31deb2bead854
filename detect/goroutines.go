package detect

import (
	"runtime"
	"sync"

	"github.com/locksmith-go/locksmith/internal/compat"
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
	w    hbInt64
	held []held
	// checked is len(held) after the last staleness check (see drop).
	checked int
	// lone is the hold of a lock taken alone, without Meta (lone.go).
	lone loneHold
	// away counts the gstates of the goroutines whose home slot (see
	// gtable) is this one that are kept elsewhere: in a later slot of
	// their probe sequence, or in the overflow maps. A goroutine
	// increments it when it claims such a gstate; whoever frees the
	// gstate or takes it over decrements it after. So a goroutine that
	// finds a count of 0 (its own increments come before in its program
	// order, and a decrement after the gstate stopped being its) and
	// another goroutine's ID in its home slot has no gstate.
	away hbInt32
	_    [52]byte // 192 bytes: no two gstates of gtable share a cache line
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
// A goroutine's probe sequence is maxProbe slots: its home slot, one of
// the first homeSlots slots, then slots beyond them. A goroutine that has
// no gstate learns it from its home slot alone while no goroutine of that
// home is kept elsewhere (see gstate.away), and otherwise probes the
// rest: 4 keeps that cheap (32 slots, each a pointer and a word to load,
// cost every short-lived goroutine 64 atomic loads per acquisition and
// per release, slow under the race detector), and with 4096 slots the
// table still finds nearly every goroutine until hundreds hold locks at
// once.
//
// The homes are few so that short-lived goroutines, one after another,
// reuse a few hundred slots rather than go round the whole table: under
// the race detector every slot whose word has been used atomically has
// its own synchronization object and vector clock (over 500 bytes), and
// 4096 slots' worth (2.5 MB) do not stay in the cache. With 256 homes
// Order mode costs a short-lived goroutine less CPU time than with 4096
// (and a table twice the size beyond them), and a pass of the sweeper
// over a table used by 4096 goroutines in turn is several times shorter:
// BenchmarkOrderShortLivedGoroutines/shared under -race and
// BenchmarkOrderGoroutineRecord/sweep show both.
//
// Rejected alternative: a sharded map under a mutex per shard for every
// lookup, which cost two atomic read-modify-writes per acquisition and
// per release (two nested locks in Order mode, as go test -run '^$'
// -bench MutexNestedPair ./bench/detectcost measures them, cost over
// one and a half times what they cost with this table).
const (
	gslots         = 4096
	homeSlots      = 256
	maxProbe       = 4
	overflowShards = 64
)

var (
	gtable    [gslots]gstate
	overflowN hbInt32
	overflow  [overflowShards]struct {
		mu sync.Mutex
		m  map[int64]*gstate
		_  [48]byte // keep shards on separate cache lines
	}
)

// home returns g's home slot, the first of its probe sequence.
func home(g int64) *gstate { return &gtable[uint64(g)%homeSlots] }

// slot returns the slot at position p of g's probe sequence: its home
// slot, then slots beyond the homes.
func slot(g int64, p uint64) *gstate {
	if p == 0 {
		return home(g)
	}
	return &gtable[homeSlots+(uint64(g)+p)%(gslots-homeSlots)]
}

// takable reports whether a slot holding w may be taken by a goroutine
// that has no gstate: it is free, or idle (and nobody is using it).
func takable(w int64) bool { return w == 0 || w&(idleBit|busyBit|sweepBit) == idleBit }

// lookup returns g's gstate, or nil.
func lookup(g int64) *gstate {
	s, _, _ := probe(g, home(g).w.Load())
	return s
}

// enter returns g's gstate marked busy, or nil if g has none and !create.
// The usual case, g's gstate in its first slot, makes no call further.
func enter(g int64, create bool) *gstate {
	s := home(g)
	if w := s.w.Load(); w&^idleBit != g || !s.w.CompareAndSwap(w, g|busyBit) {
		s = enterSlow(g, create, w)
	}
	return s
}

// enterHeld is enter(g, false) for a release. g usually holds locks
// then, and its gstate is in its home slot and not idle, so that one
// CompareAndSwap, with no load first, marks it busy.
//
// Rejected alternative: a release that marks nothing while the sweeper
// is not running. The sweeper may take any gstate that is not busy (a
// goroutine that exited holding locks looks like one between two lock
// operations), so the owner's change must exclude it at every release.
// A flag of the owner's own, set, checked against the sweeper's and
// cleared (a store, a load and a store, Dekker's way) instead of the
// CompareAndSwap and the store would save under the race detector a
// small part of a release in a new goroutine, a negligible part of what a
// short-lived goroutine costs in BenchmarkOrderShortLivedGoroutines
// (`go test -race -run '^$' -bench OrderShortLivedGoroutines ./detect`), for a second exclusion protocol
// beside the CompareAndSwaps of the sweeper and of claims.
func enterHeld(g int64) *gstate {
	if s := home(g); s.w.CompareAndSwap(g, g|busyBit) {
		return s
	}
	return enter(g, false)
}

// enterSlow is enter's slow path; w is what enter loaded from g's home
// slot.
func enterSlow(g int64, create bool, w int64) *gstate {
	for {
		s, c, cw := probe(g, w)
		if s == nil {
			if !create {
				return nil
			}
			if c != nil && c.w.CompareAndSwap(cw, g|busyBit) {
				adopt(c, cw, g)
				return c
			}
			return claim(g)
		}
		if w = s.w.Load(); w&^idleBit == g && s.w.CompareAndSwap(w, g|busyBit) {
			return s
		}
		// The sweeper or a claim holds it for a moment, or has taken it.
		for s.w.Load()&sweepBit != 0 {
			runtime.Gosched()
		}
		w = home(g).w.Load()
	}
}

// probe returns g's gstate, or, if g has none, a slot that g may take
// (c, seen holding cw; nil if none), found in the same loads: its home
// slot if free or idle, else the first free slot of its probe sequence,
// else the first idle one. Each probe is an atomic load, dear under the
// race detector, as every short-lived goroutine's first lock is: so the
// home slot's away count comes first, and while
// it is 0 (no goroutine of that home is kept elsewhere) the home slot
// alone answers, and a goroutine that has no gstate pays two loads to
// learn it and one CompareAndSwap to take its home slot, free or idle.
//
// w is the word of g's home slot, loaded by the caller.
func probe(g int64, w int64) (s, c *gstate, cw int64) {
	h := home(g)
	if w&gMask == g {
		return h, nil, 0
	}
	if takable(w) {
		c, cw = h, w
	}
	if h.away.Load() == 0 {
		return nil, c, cw
	}
	for p := uint64(1); p < maxProbe; p++ {
		x := slot(g, p)
		switch w := x.w.Load(); {
		case w&gMask == g:
			return x, nil, 0
		case c == nil && takable(w), w == 0 && c != h && cw != 0:
			c, cw = x, w // a free slot before an idle one, the home slot first
		}
	}
	if overflowN.Load() != 0 {
		sh := &overflow[uint64(g)%overflowShards]
		sh.mu.Lock()
		s = sh.m[g]
		sh.mu.Unlock()
		if s != nil {
			return s, nil, 0
		}
	}
	return nil, c, cw
}

// adopt completes g's taking of s, which it found holding w (0 if free,
// else an idle gstate of another goroutine) and has marked busy: it arms
// the sweeper for a slot that was free, and moves the away counts.
func adopt(s *gstate, w, g int64) {
	if w == 0 {
		armSweep()
	} else if o := w & gMask; s != home(o) {
		home(o).away.Add(-1)
	}
	if s != home(g) {
		home(g).away.Add(1)
	}
}

// leave ends g's use of s, which stays g's: idle if g holds nothing (n
// is len(s.held), which the caller knows: a read less; a lone record,
// see lone.go, counts as a hold).
//
//go:norace
func (s *gstate) leave(g int64, n int) {
	if n > 0 || s.lone.addr != 0 {
		s.w.Store(g)
		return
	}
	s.checked = 0
	s.w.Store(g | idleBit)
}

// free empties s, g's, and makes it available; its user (the sweeper,
// with sweepBit set) calls it.
//
//go:norace
func (s *gstate) free(g int64) {
	if cap(s.held) > 64 {
		s.held = nil
	} else {
		clear(s.held[:cap(s.held)])
		s.held = s.held[:0]
	}
	s.checked = 0
	s.dropLone()
	h := home(g)
	if s != h && overflowN.Load() != 0 {
		sh := &overflow[uint64(g)%overflowShards]
		sh.mu.Lock()
		if sh.m[g] == s {
			delete(sh.m, g)
			overflowN.Add(-1)
		}
		sh.mu.Unlock()
	}
	s.w.Store(0)
	if s != h {
		h.away.Add(-1)
	}
}

// claim gives g, which has no gstate and found no slot to take in its
// probe, one marked busy: a free slot of its probe sequence, else an idle
// one taken from its goroutine (which finds it gone and claims anew when
// it next takes a lock), else a new gstate in the overflow maps.
func claim(g int64) *gstate {
	for pass := 0; pass < 2; pass++ {
		for p := uint64(0); p < maxProbe; p++ {
			s := slot(g, p)
			// Idle: held is empty and cleared (remove clears what it
			// vacates), so s is g's as it is.
			if w := s.w.Load(); (w == 0 || pass == 1 && takable(w)) && s.w.CompareAndSwap(w, g|busyBit) {
				adopt(s, w, g)
				return s
			}
		}
	}
	armSweep()
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
	home(g).away.Add(1)
	return s
}

// stale reports whether h no longer describes a lock g holds: the lock
// was collected, or released while Order mode was off (or by a path that
// did not report it). It reads the lock without making it reachable
// (core.Meta.Holds): the sweeper runs from a cleanup, often while the
// next collection marks, and must not keep every held lock, and the
// goroutines blocked on it, alive through it. A write record of a
// read-write lock that g now holds only for reading (g downgraded it,
// RLock then Unlock, or unlocked and read-locked it, while Order mode was
// off) is not stale: it becomes the read record that ReleasedRW makes of
// a downgrade in Order mode. The caller owns h's gstate (busy, or the
// sweeper's).
//
//go:norace
func (h *held) stale(g int64) bool {
	if h.meta.Holds(g, h.read) {
		return false
	}
	if !h.read && h.meta.Class.RW && h.meta.Holds(g, true) {
		h.read = true
		return false
	}
	return true
}

// remove deletes record i; the vacated slot is cleared.
//
//go:norace
func (s *gstate) remove(i int) {
	last := len(s.held) - 1
	if i < last {
		shiftHeld(s.held, i)
	}
	s.held[last] = held{}
	s.held = s.held[:last]
}

// drop removes every stale record. Acquired calls it when the stack has
// doubled since the last check, so that records left by releases the
// detector did not see cannot pile up.
//
//go:norace
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
var sweepArmed hbBool

type gcTick struct{ _ *byte } // a pointer, so that it is not a tiny allocation

func armSweep() {
	if sweepArmed.Load() || !sweepArmed.CompareAndSwap(false, true) {
		return
	}
	compat.AddCleanup(&gcTick{}, sweepTick, 0)
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
//
//go:norace
func sweep() (claimed bool) {
	// No nesting waiting in nests keeps a lock alive past a sweep.
	deliverDrained(drainNestsNow())
	var suspects []*gstate // holding a lone record alone, seen by an earlier sweep
	visit := func(s *gstate) { sweepOne(s, &claimed, &suspects) }
	for i := range gtable {
		visit(&gtable[i])
	}
	defer func() { claimed = sweepLone(suspects) || claimed }()
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

// sweepOne is sweep's visit of s: it drops s's stale records and frees s
// if that leaves it empty, and it sets *claimed if s stays claimed, and
// adds s to *suspects if it holds only a lone record an earlier sweep saw.
//
//go:norace
func sweepOne(s *gstate, claimed *bool, suspects *[]*gstate) {
	w := s.w.Load()
	if w == 0 {
		return
	}
	if w&(busyBit|sweepBit) != 0 || !s.w.CompareAndSwap(w, w|sweepBit) {
		*claimed = true
		return
	}
	raceAcquireHolds(s)
	s.drop(w &^ idleBit)
	if s.loneStale() {
		s.dropStaleLone()
	}
	if s.lone.addr != 0 {
		if len(s.held) == 0 && s.lone.swept {
			*suspects = append(*suspects, s)
		} else {
			*claimed = true
		}
		s.lone.swept = true
		s.w.Store(w)
		return
	}
	if len(s.held) > 0 {
		*claimed = true
		s.w.Store(w)
		return
	}
	s.free(w &^ idleBit)
}
