package detect

import (
	"sync/atomic"

	"github.com/locksmith-go/locksmith/internal/core"
)

// edgeSet finds an edge by its two lock IDs without a lock: open
// addressing over a table of (key, edge) slots. Inserts and deletes are
// made under graphMu; a table that fills up is replaced whole (readers of
// the old one may miss an edge added since, which only costs a visit to
// validate). It holds the graph's edges but those held inline in their
// target's node (see edgeAt).
//
// A lookup that finds its edge costs three atomic loads (the table, the
// key, the edge) and no other read when both IDs are below 2^31 (exact
// keys, below): the lookup every nested acquisition along a known edge
// makes, where each atomic load is a call into the race runtime under
// the race detector, and each read of the edge's ends to check a hashed
// key is instrumented too (go test -race -run '^$' -bench MutexNestedPair
// ./bench/detectcost). A deleted entry leaves a tombstone that no insert
// reuses (the next rebuild drops it), so a slot that a reader saw holding a key
// holds that key's edge or nil, never another's.
var edgeSet edgeTableRef

type edgeTableRef struct{ t core.Pointer[edgeTable] }

type edgeSlot struct {
	key atomic.Uint64
	e   core.Pointer[edge]
}

type edgeTable struct {
	slots []edgeSlot
	used  int // live entries plus tombstones; guarded by graphMu
	live  int // guarded by graphMu
}

const (
	slotEmpty = 0
	slotTomb  = 1
	// hashedKey marks a key that is a hash of the two IDs, not the
	// IDs themselves: lookups check the edge's ends.
	hashedKey = 1 << 63
)

// pairKey returns the key of from -> to: exactly from<<32 | to when
// from < 2^31 and to < 2^32 (IDs count locks from 1, so the key is
// above slotTomb), else a hash marked hashedKey.
func pairKey(from, to uint64) uint64 {
	if from < 1<<31 && to < 1<<32 {
		return from<<32 | to
	}
	return mix(mix(0, from), to) | hashedKey
}

// slotOf returns where the probe for key k starts, before masking.
func slotOf(k uint64) uint64 { return mix(k, 0) }

// get returns the edge from -> to (lock IDs), or nil. It is built
// without checkptr's instrumentation (see edgeAt).
//
//go:nocheckptr
func (r *edgeTableRef) get(from, to uint64) *edge {
	t := r.t.Load()
	if t == nil {
		return nil
	}
	k := pairKey(from, to)
	slots := t.slots // read once: under the race detector each read is a call
	mask := uint64(len(slots) - 1)
	for i := slotOf(k) & mask; ; i = (i + 1) & mask {
		sl := &slots[i]
		switch sl.key.Load() {
		case k:
			e := sl.e.Load()
			if k&hashedKey == 0 || e != nil && e.from.meta().ID == from && e.to.meta().ID == to {
				return e // nil if it was just deleted
			}
		case slotEmpty:
			return nil
		}
	}
}

// add inserts e, into a slot never used in this table; graphMu is held.
func (r *edgeTableRef) add(e *edge) {
	t := r.t.Load()
	if t == nil || (t.used+1)*2 > len(t.slots) {
		t = r.rebuild(t)
	}
	k := pairKey(e.from.meta().ID, e.to.meta().ID)
	mask := uint64(len(t.slots) - 1)
	for i := slotOf(k) & mask; ; i = (i + 1) & mask {
		if t.slots[i].key.Load() == slotEmpty {
			t.used++
			t.live++
			e.slot = int32(i)
			t.slots[i].e.Store(e)
			t.slots[i].key.Store(k) // after e: a reader that sees k sees e
			return
		}
	}
}

// remove deletes e; graphMu is held. e.slot says where e is: a look
// there touches one slot, where probing for e's key would walk the
// cluster around it, a cache miss a slot in a table larger than the
// cache.
func (r *edgeTableRef) remove(e *edge) {
	t := r.t.Load()
	if t == nil {
		return
	}
	if i := int(e.slot); i < len(t.slots) && t.slots[i].e.Load() == e {
		t.slots[i].key.Store(slotTomb)
		t.slots[i].e.Store(nil)
		t.live--
		return
	}
	k := pairKey(e.from.meta().ID, e.to.meta().ID)
	mask := uint64(len(t.slots) - 1)
	for i := slotOf(k) & mask; ; i = (i + 1) & mask {
		switch t.slots[i].key.Load() {
		case k:
			if t.slots[i].e.Load() == e {
				t.slots[i].key.Store(slotTomb)
				t.slots[i].e.Store(nil)
				t.live--
				return
			}
		case slotEmpty:
			return
		}
	}
}

// rebuild replaces t with a table sized for its live entries, without
// tombstones, and publishes it; graphMu is held.
func (r *edgeTableRef) rebuild(t *edgeTable) *edgeTable {
	size, live := 256, 0
	if t != nil {
		live = t.live
	}
	for size < 4*(live+1) {
		size *= 2
	}
	nt := &edgeTable{slots: make([]edgeSlot, size)}
	mask := uint64(size - 1)
	if t != nil {
		for i := range t.slots {
			k := t.slots[i].key.Load()
			if k == slotEmpty || k == slotTomb {
				continue
			}
			for j := slotOf(k) & mask; ; j = (j + 1) & mask {
				if nt.slots[j].key.Load() == slotEmpty {
					e := t.slots[i].e.Load()
					e.slot = int32(j)
					nt.slots[j].e.Store(e)
					nt.slots[j].key.Store(k)
					break
				}
			}
			nt.used++
			nt.live++
		}
	}
	r.t.Store(nt)
	return nt
}

// count returns the number of edges in the table; graphMu is held.
func (r *edgeTableRef) count() int {
	if t := r.t.Load(); t != nil {
		return t.live
	}
	return 0
}
