package core

import (
	"math"
	"sync"
	"sync/atomic"
)

// The registry of blocked goroutines: every registered wait, sharded by
// goroutine ID, for the wait-for walk (cycles.go), Dump and the watchdog.
//
// An entry names the lock by its Meta, which holds the lock only weakly,
// and holds nothing of the waiter: no package-level state may make a
// parked goroutine's lock, its waiter or the channel or semaphore it
// parks on reachable, or Go's goroutine leak profile (runtime/pprof's
// "goroutineleak") would never see a goroutine blocked for good on one
// of our locks, nor any goroutine stuck behind it, as it sees them with
// package sync's. The lock points to its queued waiters, as a sync.Mutex
// points to its sudogs; a leaked goroutine's lock is itself reachable
// only from leaked goroutines.
//
// Nothing is lost to the walk: a registered goroutine is inside its wait,
// with the lock on its stack, so the lock is alive and its Meta's weak
// pointer resolves for as long as the entry stands (a leaked goroutine's
// stack is still marked, after the leak is found). Resolving it shades
// the lock during a collection, as any pointer a running goroutine reads
// does; the walks that do are those of goroutines parking then, which
// were running when the collection began and reach the same locks
// through what they wait for. The watchdog's scan resolves only the
// waits it reports (see Overdue).
//
// Rejected alternatives: the waiter in the entry, weakly (a weak pointer
// per wait: weak.Make on a new object allocates a handle and a special
// record under the heap's special lock, several times the cost of
// allocating the waiter; go test -run '^$' -bench Contended ./mutex);
// the waiter by its address as an integer (a walker could read a waiter,
// and the lock it names, after both were freed: the collector does not
// see an integer).

const shards = 64

// entry is one registered wait.
type entry struct {
	meta   *Meta  // the lock's, made at registration
	class  *Class // the lock's
	start  int64  // when the goroutine started to wait (nanotime)
	epoch  uint64 // the registration's, unique
	awaits uint8  // waitLock, waitRead or waitDrain: see waiter.awaits
	timed  bool   // Overdue returned this wait
}

type shard struct {
	mu sync.Mutex
	t  table    // racehb.go, racehb_race.go
	_  [40]byte // keep shards on separate cache lines
}

// lock and unlock hold the shard's lock, hidden from the race detector in
// race builds (see racehb_race.go): nothing between them but the shard's
// table, the epoch counter and the waiter's epoch.
func (s *shard) lock() {
	RaceHide()
	s.mu.Lock()
}

func (s *shard) unlock() {
	s.mu.Unlock()
	RaceShow()
}

var (
	registry [shards]shard
	epochs   atomic.Uint64
)

func shardOf(g int64) *shard { return &registry[uint64(g)%shards] }

// register records w's wait, giving the lock a Meta if it has none, in
// every mode (see parker.enter).
func register(w *waiter) {
	e := entry{meta: w.lock.Meta(w.class), class: w.class, start: w.start, awaits: w.awaits}
	s := shardOf(w.g)
	s.lock()
	s.t.reserve()
	// The epoch is taken under the shard's lock: a walk that finds the
	// entry sees every lower epoch's entry too (checkCycle's victim).
	w.epoch = epochs.Add(1)
	e.epoch = w.epoch
	raceReleaseMeta(e.meta) // what a reader of the entry reads of the registration: see racehb_race.go
	s.t.put(w.g, e)
	s.unlock()
}

func unregister(w *waiter) {
	s, ep := shardOf(w.g), w.epoch
	s.lock()
	if e, ok := s.t.get(w.g); ok && e.epoch == ep {
		s.t.del(w.g)
	}
	s.unlock()
}

// wait is a snapshot of one registered wait, its lock resolved.
type wait struct {
	g      int64
	lock   *Lock
	class  *Class
	epoch  uint64
	rw     *RWLock // the RWLock of an RW class's lock, or nil
	awaits uint8
}

// resolve returns e's wait, for goroutine g, and whether its lock
// resolved (it always does while e is registered: see above).
func (e *entry) resolve(g int64) (wait, bool) {
	raceAcquireMeta(e.meta)
	l := e.meta.Lock()
	if l == nil {
		return wait{}, false
	}
	return wait{g: g, lock: l, class: e.class, epoch: e.epoch, rw: RWOf(l, e.class), awaits: e.awaits}, true
}

// peekHolders returns the goroutines that e's wait, goroutine g's, waits
// for, as the lock's words tell without making the lock reachable (see
// Meta.Holds): the owner, or, for a writer draining an RWLock, the
// readers. It may name one the wait no longer waits for (the resolved
// wait's edge decides). Only a drain behind overflow readers, which the
// lock's words do not list, resolves the lock.
func (e *entry) peekHolders(g int64) []int64 {
	raceAcquireMeta(e.meta)
	if e.awaits != waitDrain {
		if o, ok := e.meta.peekOwner(); ok && o != 0 && o != g {
			return []int64{o}
		}
		return nil
	}
	slots, overflow, ok := e.meta.peekReaders()
	if !ok {
		return nil
	}
	if overflow {
		if w, ok := e.resolve(g); ok {
			return waitsFor(w, nil)
		}
		return nil
	}
	var hs []int64
	for _, r := range slots {
		if r != 0 && r != g {
			hs = append(hs, r)
		}
	}
	return hs
}

func waitOf(w *waiter) wait {
	return wait{g: w.g, lock: w.lock, class: w.class, epoch: w.epoch, rw: w.rw, awaits: w.awaits}
}

// waitingOn returns what g is blocked on, with the registration's epoch.
func waitingOn(g int64) (wait, bool) {
	s := shardOf(g)
	s.lock()
	e, ok := s.t.get(g)
	s.unlock()
	if !ok {
		return wait{}, false
	}
	return e.resolve(g)
}

// WaitInfo describes one goroutine blocked on a locksmith lock.
type WaitInfo struct {
	G     int64
	Lock  *Lock
	Class *Class
	Since int64 // on the Now clock
	// Read: the goroutine waits for a read lock. Drain: it holds the
	// write lock of an RWLock and waits for the readers to leave.
	Read  bool
	Drain bool
	epoch uint64 // the registration's
}

// MarkTimedOut marks wi's wait as reported, as Overdue marks what it
// returns, so that no later Overdue returns it, and reports whether this
// call marked it: false if it was marked before or has ended.
func (wi WaitInfo) MarkTimedOut() bool {
	s := shardOf(wi.G)
	s.lock()
	e, ok := s.t.get(wi.G)
	marked := ok && e.epoch == wi.epoch && !e.timed
	if marked {
		e.timed = true
		s.t.put(wi.G, e)
	}
	s.unlock()
	return marked
}

type pending struct {
	g int64
	e entry
}

func (p pending) info() (WaitInfo, bool) {
	raceAcquireMeta(p.e.meta)
	l := p.e.meta.Lock()
	return WaitInfo{G: p.g, Lock: l, Class: p.e.class, Since: p.e.start,
		Read: p.e.awaits == waitRead, Drain: p.e.awaits == waitDrain, epoch: p.e.epoch}, l != nil
}

// Waiting calls f for every goroutine blocked on a locksmith lock, without
// holding any registry lock while f runs. It resolves every wait's lock:
// it is for Dump and tests, not for a scan that runs unasked.
func Waiting(f func(WaitInfo)) {
	for _, p := range collect(math.MaxInt64, false, nil) {
		if wi, ok := p.info(); ok {
			f(wi)
		}
	}
}

// Overdue returns the waits that started at or before since (on the Now
// clock) and that no earlier call returned (nor MarkTimedOut marked),
// leaving out the goroutines in skip, and marks them returned: the
// watchdog's scan. Only the waits it returns have their locks resolved,
// so that a scan during a collection makes nothing reachable but what it
// reports.
func Overdue(since int64, skip map[int64]bool) []WaitInfo {
	var out []WaitInfo
	for _, p := range collect(since, true, skip) {
		if wi, ok := p.info(); ok {
			out = append(out, wi)
		}
	}
	return out
}

// collect returns the entries of the waits that started at or before
// since, one shard's lock held at a time; with mark, only those that no
// marking call returned, which it marks (entry.timed), leaving out the
// goroutines in skip.
func collect(since int64, mark bool, skip map[int64]bool) []pending {
	var all []pending
	for i := range registry {
		s := &registry[i]
		s.lock()
		s.t.each(func(g int64, e entry) (entry, bool) {
			if e.start > since || mark && (e.timed || skip[g]) {
				return e, false
			}
			if mark {
				e.timed = true
			}
			all = append(all, pending{g, e})
			return e, mark
		})
		s.unlock()
	}
	return all
}
