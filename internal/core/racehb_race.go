//go:build race

package core

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// The race detector's rule for the registries on the park path.
//
// The detector orders two goroutines that meet in a synchronization
// event: a sync/atomic operation, a sync.Mutex, a channel. Every park
// on one of our locks registers its wait (waits.go) and may give its
// lock a Meta (meta.go), and a Cond wait registers in the table of
// condwaits.go and lists its Cond (condslots.go), all package-level
// structures; had those used ordinary synchronization, every goroutine
// that parked would be ordered after every goroutine that parked before
// it on any lock, and a real data race between two of them would go
// unreported. A sync.Mutex's waiters meet only in the runtime's
// semaphore tables, which the detector does not see, and in the
// mutex's own state word.
//
// So, in race builds, the registries' synchronization is hidden from the
// detector (RaceHide and RaceShow, around each hold of a shard's or the
// Meta registry's lock and around the global counters, whose values are
// all that is read), and every access to the memory that lock guards is
// made by //go:norace code that holds no map (the table below), so that
// the detector neither orders the parties nor checks what it no longer
// sees ordered. What a reader of an entry needs ordered before it, the
// Meta's fields, set by the goroutine that made the Meta, is released
// on the Meta's address by each goroutine that registers a wait, with
// the waiter's epoch, which the exited-holder check reads
// (raceReleaseMeta), and acquired by each reader of an entry before it
// reads the Meta (raceAcquireMeta). A reader that is itself parking (the
// wait-for walk of Cycles mode) is thereby ordered after the goroutines
// that registered waits on a lock its walk passes through.

// RaceHide and RaceShow bracket synchronization that the race detector
// must not see: the calling goroutine's synchronization events between
// them neither publish nor acquire anything; its memory accesses are
// still checked.
func RaceHide() { runtime.RaceDisable() }
func RaceShow() { runtime.RaceEnable() }

// raceReleaseMeta is called by register between RaceHide and RaceShow.
// It merges, so that the Meta's clock has every registration's.
func raceReleaseMeta(m *Meta) {
	runtime.RaceEnable()
	runtime.RaceReleaseMerge(unsafe.Pointer(m))
	runtime.RaceDisable()
}
func raceAcquireMeta(m *Meta) { runtime.RaceAcquire(unsafe.Pointer(m)) }

// raceMadeMeta releases a new Meta's fields on its address, for the
// readers that find it other than through its lock: Order mode's sweeper,
// through another goroutine's records (RaceAcquireMeta).
func raceMadeMeta(m *Meta) { runtime.RaceReleaseMerge(unsafe.Pointer(m)) }

// RaceAcquireMeta orders the caller after m's maker (raceMadeMeta) and
// the goroutines that registered waits on it (raceReleaseMeta).
func RaceAcquireMeta(m *Meta) { runtime.RaceAcquire(unsafe.Pointer(m)) }

// raceReleaseTag and raceAcquireTag are the same for a Cond wait's entry
// in the table of condwaits.go, on its CondTag, which only the Cond's
// waits register.
func raceReleaseTag(t *CondTag) { runtime.RaceReleaseMerge(unsafe.Pointer(t)) }
func raceAcquireTag(t *CondTag) { runtime.RaceAcquire(unsafe.Pointer(t)) }

// table is one shard's registered waits, by goroutine ID: open
// addressing with linear probing, every access uninstrumented (see
// above). Goroutine IDs are never 0, the empty slot's key.
type table struct {
	slots []slot
	n     int
}

type slot struct {
	g int64
	e entry
}

//go:norace
func (t *table) home(g int64) int {
	return int((uint64(g) * 0x9E3779B97F4A7C15) >> 32 & uint64(len(t.slots)-1))
}

//go:norace
func (t *table) find(g int64) int {
	if len(t.slots) == 0 {
		return -1
	}
	for i := t.home(g); ; i = (i + 1) & (len(t.slots) - 1) {
		switch t.slots[i].g {
		case g:
			return i
		case 0:
			return -1
		}
	}
}

//go:norace
func (t *table) get(g int64) (entry, bool) {
	i := t.find(g)
	if i < 0 {
		return entry{}, false
	}
	return t.slots[i].e, true
}

// reserve makes room for a put of a new entry: put grows the table.
func (t *table) reserve() {}

// put stores g's entry.
//
//go:norace
func (t *table) put(g int64, e entry) {
	if i := t.find(g); i >= 0 {
		t.slots[i].e = e
		return
	}
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	t.insert(g, e)
	t.n++
}

//go:norace
func (t *table) insert(g int64, e entry) {
	i := t.home(g)
	for t.slots[i].g != 0 {
		i = (i + 1) & (len(t.slots) - 1)
	}
	t.slots[i].g = g
	t.slots[i].e = e
}

//go:norace
func (t *table) grow() {
	old := t.slots
	n := 2 * len(old)
	if n == 0 {
		n = 8
	}
	t.slots = make([]slot, n)
	for i := range old {
		if old[i].g != 0 {
			t.insert(old[i].g, old[i].e)
		}
	}
}

// del removes g's entry, shifting back the entries its slot displaced.
//
//go:norace
func (t *table) del(g int64) {
	i := t.find(g)
	if i < 0 {
		return
	}
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j].g != 0; j = (j + 1) & mask {
		h := t.home(t.slots[j].g)
		// The entry at j may move to i if its home is not in (i, j].
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = slot{}
	t.n--
}

//go:norace
func (t *table) len() int { return t.n }

// each calls f for every entry, storing the entry f returns if it says
// so. f gets a copy, so that its own accesses touch none of the table.
//
//go:norace
func (t *table) each(f func(g int64, e entry) (entry, bool)) {
	for i := range t.slots {
		if g := t.slots[i].g; g != 0 {
			if ne, ok := f(g, t.slots[i].e); ok {
				t.slots[i].e = ne
			}
		}
	}
}

// In race builds a new Meta is not appended to the registry's list under
// metas.mu, which every lock's first park would take: it is pushed on
// metaPending, a stack linked through the Metas, its links hidden from
// the race detector, and the next reader of the list, under metas.mu,
// moves it over (drainMetas). Each Meta publishes itself to that reader
// alone: the store to pendReady, then the reader's load of it.
type metaRace struct {
	pendNext  atomic.Pointer[Meta]
	pendReady atomic.Bool
}

var metaPending atomic.Pointer[Meta]

// addMeta registers a new lock's Meta.
func addMeta(m *Meta) {
	m.pendReady.Store(true)
	RaceHide()
	for {
		old := metaPending.Load()
		m.pendNext.Store(old)
		if metaPending.CompareAndSwap(old, m) {
			break
		}
	}
	RaceShow()
}

// drainMetas moves the Metas addMeta left aside into the registry's
// list, in the order they were added; metas.mu is held.
func drainMetas() {
	RaceHide()
	m := metaPending.Swap(nil)
	RaceShow()
	var stack []*Meta
	for m != nil {
		stack = append(stack, m)
		RaceHide()
		m = m.pendNext.Swap(nil)
		RaceShow()
	}
	for i := len(stack) - 1; i >= 0; i-- {
		stack[i].pendReady.Load() // acquires what its adder wrote
		metas.all.Append(metaEntry{stack[i].lock, stack[i]})
	}
}

// A Cond's first registered ticket wait lists the Cond (WatchCondSlots)
// as a lock's first park registers its Meta: in race builds on a stack
// hidden from the race detector, which the next reader of the list
// drains under condConds.mu. Each node publishes its entry to that reader
// alone (ready). The adder that finds the stack past the list's pruning
// point starts a goroutine to drain and prune it, so that the list stays
// bounded without reads; that goroutine is ordered after the adder, never
// before another.
type condNode struct {
	e     condCond
	next  atomic.Pointer[condNode]
	ready atomic.Bool
}

var (
	condPending  atomic.Pointer[condNode]
	condPendingN atomic.Int64 // nodes pushed since the pruning goroutine last ran
	condPruneAt  atomic.Int64 // condConds.pruneAt, for the adders
)

func addCondCond(e condCond) {
	n := &condNode{e: e}
	n.ready.Store(true)
	RaceHide()
	for {
		old := condPending.Load()
		n.next.Store(old)
		if condPending.CompareAndSwap(old, n) {
			break
		}
	}
	prune := condPendingN.Add(1) == max(condPruneAt.Load(), 64)
	RaceShow()
	if prune {
		go func() {
			lockCondConds()
			condConds.mu.Unlock()
		}()
	}
}

// drainCondConds moves the Conds addCondCond left aside into the list,
// in the order they were added, and prunes it; condConds.mu is held.
func drainCondConds() {
	RaceHide()
	n := condPending.Swap(nil)
	condPendingN.Store(0)
	RaceShow()
	var stack []*condNode
	for n != nil {
		stack = append(stack, n)
		RaceHide()
		n = n.next.Swap(nil)
		RaceShow()
	}
	for i := len(stack) - 1; i >= 0; i-- {
		stack[i].ready.Load() // acquires what its adder wrote
		pruneCondConds()
		condConds.all = append(condConds.all, stack[i].e)
	}
	RaceHide()
	condPruneAt.Store(int64(condConds.pruneAt))
	RaceShow()
}
