package detect

import (
	"sync"
	"sync/atomic"

	"github.com/locksmith-go/locksmith/internal/core"
)

// Order mode keeps, per goroutine, the stack of locks it holds, and one
// global lock-order graph: an edge a -> b means some goroutine acquired b
// while holding a, that is, the program relies on a < b ("a must be
// acquired before b"). An acquisition that would add an edge closing a
// cycle is a possible deadlock and is reported.
//
// As lockdep does, each distinct chain of held locks (the IDs of the held
// locks in order, plus the new one) is validated once: its 64-bit hash goes
// into the chain set, and later acquisitions with the same chain cost one
// lookup. A hash collision would skip one validation; at 64 bits that is
// far less likely than any other failure.

// held is one lock a goroutine holds.
type held struct {
	lock  *core.Lock
	meta  *core.Meta
	try   bool      // taken by TryLock: no edge into it
	chain uint64    // hash of the chain of held locks up to and including this one
	pcs   []uintptr // where it was acquired, if recorded (see Acquired), else nil
}

// gstate is what one goroutine holds, in the order taken. While g is
// non-zero, only goroutine g touches held, so it needs no lock: the
// atomic claim and release of g order one goroutine's use of a recycled
// gstate after the previous one's.
type gstate struct {
	g    atomic.Int64
	held []held
}

// gtable finds a goroutine's gstate without a lock: open addressing on the
// goroutine ID. A slot, once filled, always holds the same gstate, which
// is free (g == 0) or claimed by one goroutine; so a goroutine's claimed
// slot always lies before the first empty slot of its probe sequence. A
// goroutine claims a slot when it takes its first lock and frees it when
// it releases its last, so the table holds the goroutines that hold locks
// now (plus free slots for reuse), not every goroutine that ever did.
// Goroutines beyond what the probe limit finds go to a locked map.
//
// Rejected alternative: a sharded map under a mutex per shard, which cost
// two atomic read-modify-writes per acquisition and per release (measured:
// two nested locks at 145 ns against 85 ns for this table).
const (
	gslots   = 4096
	maxProbe = 32
)

var (
	gtable   [gslots]atomic.Pointer[gstate]
	overflow struct {
		n  atomic.Int32
		mu sync.Mutex
		m  map[int64]*gstate
	}
)

func lookup(g int64) *gstate {
	base := uint64(g)
	for p := uint64(0); p < maxProbe; p++ {
		s := gtable[(base+p)%gslots].Load()
		if s == nil {
			break
		}
		if s.g.Load() == g {
			return s
		}
	}
	if overflow.n.Load() == 0 {
		return nil
	}
	overflow.mu.Lock()
	defer overflow.mu.Unlock()
	return overflow.m[g]
}

func claim(g int64) *gstate {
	base := uint64(g)
	for p := uint64(0); p < maxProbe; p++ {
		slot := &gtable[(base+p)%gslots]
		s := slot.Load()
		if s == nil {
			fresh := &gstate{}
			fresh.g.Store(g)
			if slot.CompareAndSwap(nil, fresh) {
				return fresh
			}
			s = slot.Load()
		}
		if s.g.Load() == 0 && s.g.CompareAndSwap(0, g) {
			return s
		}
	}
	overflow.mu.Lock()
	defer overflow.mu.Unlock()
	if overflow.m == nil {
		overflow.m = map[int64]*gstate{}
	}
	s := &gstate{}
	s.g.Store(g)
	overflow.m[g] = s
	overflow.n.Add(1)
	return s
}

func unclaim(s *gstate, g int64) {
	s.held = s.held[:0]
	if overflow.n.Load() != 0 {
		overflow.mu.Lock()
		if overflow.m[g] == s {
			delete(overflow.m, g)
			overflow.n.Add(-1)
			overflow.mu.Unlock()
			return
		}
		overflow.mu.Unlock()
	}
	s.g.Store(0)
}

func mix(h, id uint64, try bool) uint64 {
	// splitmix64 finaliser over the running hash and the next ID.
	x := h ^ (id + 0x9e3779b97f4a7c15)
	if try {
		x ^= 0x5851f42d4c957f2d
	}
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// aloneSeen, in core.Meta.Flags: the lock was acquired in Order mode by a
// goroutine that held no other lock.
const aloneSeen = 1

// Acquired records that g acquired l. The stack of the acquisition
// (runtime.Callers: about a microsecond, too much for every acquisition)
// is recorded, in the held record and for reports, only when the
// acquisition is the first of its kind: the lock's first acquisition, its
// first by a goroutine holding nothing, and an acquisition whose chain of
// held locks is new and is validated. Inversions are made of new chains,
// usually of new lock instances, so the records a report needs are
// usually there.
func (engine) Acquired(l *core.Lock, k *core.Kind, g int64, try bool) {
	m := l.Meta(k)
	gs := lookup(g)
	if gs == nil {
		gs = claim(g)
	}
	gs.dropReleased(g)
	var prev uint64
	n := len(gs.held)
	if n > 0 {
		prev = gs.held[n-1].chain
	}
	chain := mix(prev, m.ID, try)
	validating := !try && n > 0 && !chains.has(chain)
	var at []uintptr
	if validating || !m.HasSite() || (n == 0 && m.Flags.Load()&aloneSeen == 0) {
		at = pcs(1)
		m.SetSiteOnce(at)
		if n == 0 {
			m.Flags.Or(aloneSeen)
		}
	}
	gs.held = append(gs.held, held{lock: l, meta: m, try: try, chain: chain, pcs: at})
	if validating {
		validate(g, gs.held[:n], m, chain, at)
	}
}

// heldPCs returns where goroutine g acquired the lock with the given ID,
// if its held record has the stack. The caller must know that g's records
// do not change meanwhile (g is parked in a deadlock, or is the caller).
func heldPCs(g int64, id uint64) []uintptr {
	gs := lookup(g)
	if gs == nil {
		return nil
	}
	for i := len(gs.held) - 1; i >= 0; i-- {
		if gs.held[i].meta.ID == id {
			return gs.held[i].pcs
		}
	}
	return nil
}

func (engine) Released(l *core.Lock, g int64) {
	gs := lookup(g)
	if gs == nil {
		return // taken before Order mode was on
	}
	i := len(gs.held) - 1
	for i >= 0 && gs.held[i].lock != l {
		i--
	}
	if i < 0 {
		return
	}
	if m := gs.held[i].meta; m.Holds.Load() != 0 {
		m.Holds.Store(0) // released with re-entries outstanding: by a Cond wait's ReleaseAll
	}
	gs.remove(i)
	if len(gs.held) == 0 {
		unclaim(gs, g)
	}
}

// remove deletes record i. The vacated slot is cleared, so that the
// backing array keeps no released lock alive; the chains above i, if it
// was unlocked out of order, are recomputed.
func (gs *gstate) remove(i int) {
	last := len(gs.held) - 1
	if i == last { // the usual case: unlocked in reverse order
		gs.held[last] = held{}
		gs.held = gs.held[:last]
		return
	}
	copy(gs.held[i:], gs.held[i+1:])
	gs.held[last] = held{}
	gs.held = gs.held[:last]
	for j := i; j < last; j++ {
		var prev uint64
		if j > 0 {
			prev = gs.held[j-1].chain
		}
		gs.held[j].chain = mix(prev, gs.held[j].meta.ID, gs.held[j].try)
	}
}

// dropReleased removes the records of locks that g no longer holds: locks
// taken in Order mode and released while the detector was in another
// mode, so that Released never saw them. Kept, they would add edges from
// locks not held (false reports) and keep those locks alive. It costs a
// load of each held lock's state word, which g itself last wrote.
func (gs *gstate) dropReleased(g int64) {
	for i := len(gs.held) - 1; i >= 0; i-- {
		if gs.held[i].lock.Owner() != g {
			gs.remove(i)
		}
	}
}

func (engine) Reentered(l *core.Lock, g int64, delta int) {
	if m := l.PeekMeta(); m != nil {
		m.Holds.Add(int32(delta))
	}
}

// chainSet is the set of validated chain hashes: lookups take no lock
// (open addressing over atomic words); inserts and deletes are made under
// graphMu, and a table that fills up is replaced whole.
type chainTable struct {
	slots []atomic.Uint64
	used  int // live entries plus tombstones; guarded by graphMu
	live  int // guarded by graphMu
}

type chainSet struct{ t atomic.Pointer[chainTable] }

var chains chainSet

const (
	chainEmpty = 0
	chainTomb  = 1
)

// key keeps hashes clear of the two reserved values.
func key(h uint64) uint64 {
	if h <= chainTomb {
		h += 2
	}
	return h
}

func (c *chainSet) has(h uint64) bool {
	t := c.t.Load()
	if t == nil {
		return false
	}
	h = key(h)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch t.slots[i].Load() {
		case h:
			return true
		case chainEmpty:
			return false
		}
	}
}

// add inserts h; graphMu is held.
func (c *chainSet) add(h uint64) {
	if c.has(h) {
		return
	}
	t := c.t.Load()
	if t == nil || (t.used+1)*2 > len(t.slots) {
		t = c.rebuild(t)
	}
	h = key(h)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		v := t.slots[i].Load()
		if v == chainEmpty || v == chainTomb {
			if v == chainEmpty {
				t.used++
			}
			t.live++
			t.slots[i].Store(h)
			return
		}
	}
}

// remove deletes h; graphMu is held.
func (c *chainSet) remove(h uint64) {
	t := c.t.Load()
	if t == nil {
		return
	}
	h = key(h)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch t.slots[i].Load() {
		case h:
			t.slots[i].Store(chainTomb)
			t.live--
			return
		case chainEmpty:
			return
		}
	}
}

// rebuild replaces t with a table sized for its live entries, without
// tombstones, and publishes it. Readers of the old table may miss an entry
// inserted since, which only costs a second validation.
func (c *chainSet) rebuild(t *chainTable) *chainTable {
	size := 1024
	live := 0
	if t != nil {
		live = t.live
	}
	for size < 4*(live+1) {
		size *= 2
	}
	nt := &chainTable{slots: make([]atomic.Uint64, size)}
	mask := uint64(size - 1)
	if t != nil {
		for i := range t.slots {
			v := t.slots[i].Load()
			if v == chainEmpty || v == chainTomb {
				continue
			}
			for j := v & mask; ; j = (j + 1) & mask {
				if nt.slots[j].Load() == chainEmpty {
					nt.slots[j].Store(v)
					break
				}
			}
			nt.used++
			nt.live++
		}
	}
	c.t.Store(nt)
	return nt
}

// chainCount returns the number of cached chains (for tests).
func chainCount() int {
	graphMu.Lock()
	defer graphMu.Unlock()
	if t := chains.t.Load(); t != nil {
		return t.live
	}
	return 0
}

// The lock-order graph. Guarded by graphMu, which is taken only to
// validate a chain not seen before, to forget a collected lock, and by
// Dump and WriteDOT.
var (
	graphMu sync.Mutex
	graph   = map[uint64]*node{}
)

type node struct {
	meta   *core.Meta
	out    map[uint64]*edge
	in     map[uint64]bool
	chains map[uint64]bool // validated chains that include this lock, for Forget
}

// chainMembers maps a validated chain to the IDs of its locks, so that
// forgetting one lock drops the chain from every member. Guarded by graphMu.
var chainMembers = map[uint64][]uint64{}

type edge struct {
	from, to *node
	g        int64     // the goroutine that first took to while holding from
	stack    []uintptr // where (program counters, symbolised for a report)
	heldAt   []uintptr // where g had acquired from, if recorded
}

func nodeFor(m *core.Meta) *node {
	n := graph[m.ID]
	if n == nil {
		n = &node{meta: m, out: map[uint64]*edge{}, in: map[uint64]bool{}, chains: map[uint64]bool{}}
		graph[m.ID] = n
	}
	return n
}

// validate adds the edges held -> m for a new chain, reporting any that
// closes a cycle; stack is where m is being acquired.
func validate(g int64, before []held, m *core.Meta, chain uint64, stack []uintptr) {
	var reports []*Report
	graphMu.Lock()
	to := nodeFor(m)
	for _, h := range before {
		from := nodeFor(h.meta)
		if from == to || from.out[to.meta.ID] != nil {
			continue
		}
		if path := findPath(to, from); path != nil {
			if r := orderReport(path, from, to, g, stack, h.pcs); r != nil {
				reports = append(reports, r)
			}
		}
		e := &edge{from: from, to: to, g: g, stack: stack, heldAt: h.pcs}
		from.out[to.meta.ID] = e
		to.in[from.meta.ID] = true
	}
	members := make([]uint64, 0, len(before)+1)
	for _, h := range before {
		nodeFor(h.meta).chains[chain] = true
		members = append(members, h.meta.ID)
	}
	to.chains[chain] = true
	chainMembers[chain] = append(members, m.ID)
	chains.add(chain)
	graphMu.Unlock()
	deliverAll(reports)
}

// findPath returns the edges of a path from a to b, breadth first (so the
// shortest), or nil. graphMu is held.
func findPath(a, b *node) []*edge {
	prev := map[uint64]*edge{}
	queue := []*node{a}
	visited := map[uint64]bool{a.meta.ID: true}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, e := range n.out {
			id := e.to.meta.ID
			if visited[id] {
				continue
			}
			visited[id] = true
			prev[id] = e
			if e.to == b {
				var path []*edge
				for x := b; x != a; x = prev[x.meta.ID].from {
					path = append(path, prev[x.meta.ID])
				}
				for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
					path[i], path[j] = path[j], path[i]
				}
				return path
			}
			queue = append(queue, e.to)
		}
	}
	return nil
}

// orderReport builds the LockOrder report for path (to ->* from) closed by
// the new edge from -> to, taken at stack by g, which acquired from at
// fromAt; or nil if the same problem was reported before (engine.go's
// note).
func orderReport(path []*edge, from, to *node, g int64, stack, fromAt []uintptr) *Report {
	ids := make([]uint64, 0, len(path)+1)
	gs := make([]int64, 0, len(path)+1)
	r := &Report{Kind: LockOrder, Mode: Order}
	for _, e := range path {
		ids = append(ids, e.from.meta.ID)
		gs = append(gs, e.g)
		r.Steps = append(r.Steps, Step{Goroutine: e.g, Holds: lockInfo(e.from.meta), WaitsFor: lockInfo(e.to.meta),
			Stack: symbolise(e.stack), HoldsAt: symbolise(e.heldAt)})
	}
	ids = append(ids, from.meta.ID)
	gs = append(gs, g)
	r.Steps = append(r.Steps, Step{Goroutine: g, Holds: lockInfo(from.meta), WaitsFor: lockInfo(to.meta),
		Stack: symbolise(stack), HoldsAt: symbolise(fromAt)})
	if !note(r, ids, gs) {
		return nil
	}
	return r
}

// forgetOrder drops a collected lock from the graph and the chain cache.
func forgetOrder(id uint64) {
	graphMu.Lock()
	defer graphMu.Unlock()
	n := graph[id]
	if n == nil {
		return
	}
	for to := range n.out {
		if t := graph[to]; t != nil {
			delete(t.in, id)
		}
	}
	for from := range n.in {
		if f := graph[from]; f != nil {
			delete(f.out, id)
		}
	}
	for c := range n.chains {
		for _, member := range chainMembers[c] {
			if x := graph[member]; x != nil && member != id {
				delete(x.chains, c)
			}
		}
		delete(chainMembers, c)
		chains.remove(c)
	}
	delete(graph, id)
}
