package core

import (
	"sync"
	"sync/atomic"
)

// The registry of Cond waits: every goroutine parked in a condvar.Cond
// wait (monitor.Monitor's Wait is one), for the watchdog's Cond checks and
// Dump in package detect. A goroutine is registered from just before its
// wait releases the lock until the wait is decided and the goroutine runs
// again, before it retakes the lock (it is then a lock waiter, if it has
// to wait).
//
// An entry holds no pointer to the Cond or to a lock: it points to the
// Cond's CondTag, which names the Cond by its address and the lock it is
// bound to by its Meta, which holds the lock only weakly. A goroutine
// blocked for good on a Cond that nothing else can reach is then still
// found by Go's goroutine leak profile, and so are the goroutines blocked
// on a lock it holds.
//
// A registration is on every Cond wait's path, so it takes no time stamp:
// reading the clock costs more than the rest of it together on some
// machines (see BenchmarkCondPingPongRatio in package condvar). The
// watchdog learns how long a wait has lasted from the scan that first saw
// it (see Epoch). A wait on a ticket of the Cond's notify list, the
// common untimed wait, is registered in the Cond itself (see
// condslots.go). Every other wait, and a ticket wait that finds the
// Cond's slots taken, is registered here, with a few atomic operations on
// a cache line of the goroutine's own (its home slot in a table, by
// goroutine ID, probed linearly). Goroutines beyond what the table holds
// go to a map under a mutex.
//
// Rejected alternatives: a field in the waiter record (ticket waits, the
// common case, have none, and the watchdog would have to lock each Cond
// to read its queue); the map of lock waiters' form for every wait,
// with a time stamp (it doubled a Signal-Wait round trip's cost in
// BenchmarkCondPingPongRatio).

// condWatch is set while package detect wants Cond waits registered: while
// a wait timeout is configured (see SetCondWatch).
var condWatch atomic.Bool

// SetCondWatch turns the registration of Cond waits on or off. Waits
// registered before it is turned off still end their registration.
func SetCondWatch(on bool) { condWatch.Store(on) }

// CondWatch reports whether Cond waits are to be registered.
func CondWatch() bool { return condWatch.Load() }

// CondTag is what a Cond tells the registry about itself, made once per
// Cond (by its first wait) and never changed.
type CondTag struct {
	Cond uintptr // the Cond's address
	Lock *Meta   // the Meta of the lock the Cond is bound to; nil if not a locksmith lock
	Type string  // the lock's type, as %T prints it
}

// CondTableSize is the size of the table of Cond waits, for tests.
const CondTableSize = condSlots

const (
	condSlots  = 256
	condProbes = 8
)

type condSlot struct {
	g     atomic.Int64 // the registered goroutine; 0 for a free slot
	tag   atomic.Pointer[CondTag]
	epoch atomic.Uint64 // counts the registrations made in the slot
	_     [40]byte      // keep slots on separate cache lines
}

var (
	condTable [condSlots]condSlot
	condOver  struct {
		mu sync.Mutex
		m  map[int64]condOverEntry
		n  atomic.Int32 // len(m), for a look without mu
		ep uint64       // guarded by mu: epochs of the entries
	}
)

type condOverEntry struct {
	tag   *CondTag
	epoch uint64
}

// CondWaitInfo describes one goroutine parked in a Cond wait.
type CondWaitInfo struct {
	G   int64
	Tag *CondTag
	// Epoch tells successive waits of G apart: two snapshots of G's wait
	// with the same Epoch are of one wait. (A table slot's count and the
	// slot, the map's count, or a ticket wait's ticket and Cond; the low
	// two bits tell the three apart.)
	Epoch uint64
}

// CondWaitBegin registers g as parked on the Cond t describes. A goroutine
// has at most one Cond wait at a time.
//
// In race builds the table's atomics are hidden from the race detector
// (see racehb_race.go): a slot's last goroutine must not be ordered
// before its next. What a reader needs of the wait, the tag's fields, is
// released on the tag and acquired by the reader (read). A goroutine
// that goes to the map is ordered with the map's other goroutines.
func CondWaitBegin(g int64, t *CondTag) {
	raceReleaseTag(t)
	h := uint64(g)
	RaceHide()
	for i := range uint64(condProbes) {
		s := &condTable[(h+i)%condSlots]
		if s.g.Load() == 0 && s.g.CompareAndSwap(0, g) {
			s.epoch.Add(1)
			s.tag.Store(t)
			RaceShow()
			return
		}
	}
	RaceShow()
	condOver.mu.Lock()
	if condOver.m == nil {
		condOver.m = make(map[int64]condOverEntry)
	}
	condOver.ep++
	condOver.m[g] = condOverEntry{t, condOver.ep}
	condOver.n.Store(int32(len(condOver.m)))
	condOver.mu.Unlock()
}

// CondWaitEnd removes g's Cond wait, which CondWaitBegin registered.
func CondWaitEnd(g int64) {
	h := uint64(g)
	RaceHide()
	for i := range uint64(condProbes) {
		s := &condTable[(h+i)%condSlots]
		if s.g.Load() == g {
			s.tag.Store(nil) // before the slot is free: see read
			s.g.Store(0)
			RaceShow()
			return
		}
	}
	RaceShow()
	condOver.mu.Lock()
	delete(condOver.m, g)
	condOver.n.Store(int32(len(condOver.m)))
	condOver.mu.Unlock()
}

// read returns the wait registered in s, if any. A tag is stored after
// the slot is claimed and cleared before it is freed, so a tag read
// between two equal loads of g belongs to a wait of that goroutine.
func (s *condSlot) read(idx int) (CondWaitInfo, bool) {
	RaceHide()
	g := s.g.Load()
	if g == 0 {
		RaceShow()
		return CondWaitInfo{}, false
	}
	ep := s.epoch.Load()
	t := s.tag.Load()
	ok := t != nil && s.g.Load() == g && s.epoch.Load() == ep
	RaceShow()
	if !ok {
		return CondWaitInfo{}, false // being registered or ended
	}
	raceAcquireTag(t)
	return CondWaitInfo{G: g, Tag: t, Epoch: ep<<10 | uint64(idx)<<2}, true
}

// CondWaitOf returns g's Cond wait, if g is parked in one.
func CondWaitOf(g int64) (CondWaitInfo, bool) {
	for _, ci := range condSlotWaits(nil) {
		if ci.G == g {
			return ci, true
		}
	}
	h := uint64(g)
	for i := range uint64(condProbes) {
		j := int((h + i) % condSlots)
		if ci, ok := condTable[j].read(j); ok && ci.G == g {
			return ci, true
		}
	}
	if condOver.n.Load() == 0 {
		return CondWaitInfo{}, false
	}
	condOver.mu.Lock()
	e, ok := condOver.m[g]
	condOver.mu.Unlock()
	return CondWaitInfo{G: g, Tag: e.tag, Epoch: e.epoch<<2 | 1}, ok
}

// CondWaiting calls f for every goroutine parked in a Cond wait.
func CondWaiting(f func(CondWaitInfo)) {
	for _, ci := range condSlotWaits(nil) {
		f(ci)
	}
	for i := range condTable {
		if ci, ok := condTable[i].read(i); ok {
			f(ci)
		}
	}
	if condOver.n.Load() == 0 {
		return
	}
	condOver.mu.Lock()
	all := make([]CondWaitInfo, 0, len(condOver.m))
	for g, e := range condOver.m {
		all = append(all, CondWaitInfo{G: g, Tag: e.tag, Epoch: e.epoch<<2 | 1})
	}
	condOver.mu.Unlock()
	for _, ci := range all {
		f(ci)
	}
}
