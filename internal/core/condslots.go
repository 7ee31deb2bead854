package core

import (
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/locksmith-go/locksmith/internal/compat"
	"github.com/locksmith-go/locksmith/internal/rt"
)

// Cond waits on a ticket of a Cond's notify list (condvar's ticket path,
// the common untimed wait) are registered in the Cond itself, in a
// CondSlots beside its notify list, rather than in the table of
// condwaits.go: a slot is one word, the goroutine's ID and its ticket,
// claimed with one CompareAndSwap on a cache line the wait has just
// written (taking the ticket), and nothing ends the registration: a
// ticket that the notify list has notified, or that no goroutine holds
// any more, is no wait. A wait whose ticket was given up without being
// notified (its release of the lock panicked) clears its slot.
//
// The watchdog finds the slots through condConds, a list of weak pointers
// to every Cond that has had a registered wait, and reads them, and the
// notify list's ticket counters, with rt.WeakLoad, which makes nothing
// reachable: a goroutine blocked for good on a Cond that nothing else
// reaches is still found by Go's goroutine leak profile. Before go1.24
// a compat.Weak holds its object strongly, and with -tags purego
// rt.WeakLoad calls Value, which shades the object during a collection;
// condvar then registers every wait in the table (see WatchCondSlots).
//
// Rejected alternatives: the table of condwaits.go for ticket waits too
// (its claim, tag, epoch and release are five atomic read-modify-writes
// and stores per wait, on a line of the table's, and two goroutine ID
// reads: BenchmarkCondPingPongRatio's ratio to sync.Cond rose by 0.07-0.10
// with a wait timeout set, against 0.04-0.06 with the slots, medians of
// 15 interleaved runs of each: `LOCKSMITH_WAIT_TIMEOUT=0` turns it off); a slot that its wait clears when it wakes
// (a second atomic store per wait, for a state that the notify list
// already records).

// CondSlotCount is the number of ticket waits a Cond registers in its
// own CondSlots; its further concurrent waits go to the table.
const CondSlotCount = 4

// CondSlots is the part of a Cond that registers its ticket waits. Each
// word is 0 (free) or a waiter's goroutine ID << 32 | its ticket.
type CondSlots struct {
	w [CondSlotCount]atomic.Uint64
}

// condSlotsUsable reports whether Conds register ticket waits in their
// CondSlots: where rt.WeakLoad makes nothing reachable.
var condSlotsUsable = compat.WeakPointers && rt.WeakPeeks()

// ticketWaiting reports whether ticket t is not yet notified, for a
// notify list whose next ticket to take is wait and next to notify is
// notify (both wrapping around).
func ticketWaiting(t, wait, notify uint32) bool { return t-notify < wait-notify }

// Claim registers goroutine g (which must fit in 32 bits) as waiting on
// ticket t of nl, the notify list beside s, in t's own slot (t %
// CondSlotCount), and reports whether it did: not if the slot holds a
// ticket still waiting (ClaimOther tries the others). It inlines.
func (s *CondSlots) Claim(g int64, t uint32, nl *rt.NotifyList) bool {
	return s.claimAt(t%CondSlotCount, g, t, nl)
}

// claimAt claims slot j for g and t if the ticket it holds is no wait.
func (s *CondSlots) claimAt(j uint32, g int64, t uint32, nl *rt.NotifyList) bool {
	w := &s.w[j]
	old := w.Load()
	return (old == 0 || !ticketWaiting(uint32(old), atomic.LoadUint32(&nl.Wait), atomic.LoadUint32(&nl.Notify))) &&
		w.CompareAndSwap(old, uint64(g)<<32|uint64(t))
}

// ClaimOther is Claim in the other slots: it returns the index of the
// slot it claimed, or -1 if each holds a ticket still waiting.
func (s *CondSlots) ClaimOther(g int64, t uint32, nl *rt.NotifyList) int {
	for i := uint32(1); i < CondSlotCount; i++ {
		if j := (t + i) % CondSlotCount; s.claimAt(j, g, t, nl) {
			return int(j)
		}
	}
	return -1
}

// Clear ends the registration Claim made in slot i for g and t, for a
// wait that gives its ticket up without its being notified.
func (s *CondSlots) Clear(i int, g int64, t uint32) {
	s.w[i].CompareAndSwap(uint64(g)<<32|uint64(t), 0)
}

// Waiting returns the number of slots that hold a ticket of nl still
// waiting, for tests.
func (s *CondSlots) Waiting(nl *rt.NotifyList) int {
	wait, notify := atomic.LoadUint32(&nl.Wait), atomic.LoadUint32(&nl.Notify)
	n := 0
	for i := range s.w {
		if v := s.w[i].Load(); v != 0 && ticketWaiting(uint32(v), wait, notify) {
			n++
		}
	}
	return n
}

// condCond is a Cond with registered ticket waits, in condConds.
type condCond struct {
	tag  *CondTag
	load func(off uintptr, words []int64) bool // rt.WeakLoad of the Cond
	nl   uintptr                               // the offset of its notify list
	sl   uintptr                               // the offset of its CondSlots
}

// condConds lists the Conds with registered ticket waits. The watchdog's
// reads forget the collected ones (see condSlotWaits), and so does
// WatchCondSlots each time the list has doubled since it last did, so
// that without reads (no wait timeout set any more) the list stays
// within twice the Conds alive.
var condConds struct {
	mu      sync.Mutex
	all     []condCond
	pruneAt int
}

// WatchCondSlots adds the Cond w points to, which t describes, to the
// Conds whose CondSlots the watchdog reads: nlOff and slotsOff are the
// offsets in T of its notify list and its CondSlots (8-byte aligned). It
// reports whether it did: not where a weak pointer is strong (before
// go1.24) or rt.WeakLoad would make the Cond reachable (see
// rt.WeakPeeks), nor if the offsets are not aligned. Call it once per Cond, before its first Claim.
func WatchCondSlots[T any](w compat.Weak[T], t *CondTag, nlOff, slotsOff uintptr) bool {
	if !condSlotsUsable || nlOff%8 != 0 || slotsOff%8 != 0 {
		return false
	}
	e := condCond{tag: t, nl: nlOff, sl: slotsOff,
		load: func(off uintptr, words []int64) bool { return rt.WeakLoad(w, off, words) }}
	addCondCond(e) // racehb.go, racehb_race.go
	return true
}

// pruneCondConds forgets the collected Conds of the list once it has
// doubled since it last did; condConds.mu is held.
func pruneCondConds() {
	if len(condConds.all) >= condConds.pruneAt {
		var w [1]int64
		condConds.all = slices.DeleteFunc(condConds.all, func(e condCond) bool { return !e.load(e.nl, w[:]) })
		condConds.pruneAt = max(2*len(condConds.all), 64)
	}
}

// lockCondConds locks the list, every Cond added so far in it.
func lockCondConds() {
	condConds.mu.Lock()
	drainCondConds()
}

// condSlotWaits appends to out the ticket waits registered in the
// listed Conds, forgetting the Conds that have been collected.
func condSlotWaits(out []CondWaitInfo) []CondWaitInfo {
	lockCondConds()
	defer condConds.mu.Unlock()
	var words [CondSlotCount]int64
	var nlw [1]int64
	for i := len(condConds.all) - 1; i >= 0; i-- {
		e := &condConds.all[i]
		// The slots first, then the counters: a slot changes only once
		// its ticket is notified (or given up), so a ticket that the
		// later counters show waiting was the slot's all along.
		if !e.load(e.sl, words[:]) || !e.load(e.nl, nlw[:]) {
			last := len(condConds.all) - 1
			condConds.all[i] = condConds.all[last]
			condConds.all[last] = condCond{}
			condConds.all = condConds.all[:last]
			continue
		}
		ctr := *(*[2]uint32)(unsafe.Pointer(&nlw[0])) // Wait, Notify, in memory order
		for _, v := range words {
			g, t := int64(uint64(v)>>32), uint32(v)
			if g != 0 && ticketWaiting(t, ctr[0], ctr[1]) {
				out = append(out, CondWaitInfo{G: g, Tag: e.tag, Epoch: slotEpoch(e.tag.Cond, t)})
			}
		}
	}
	return out
}

// slotEpoch is the Epoch of a ticket wait: its ticket and its Cond (see
// CondWaitInfo; the low two bits tell the kinds of Epoch apart).
func slotEpoch(cond uintptr, t uint32) uint64 {
	return (uint64(t)<<30^uint64(cond>>3))<<2 | 2
}
