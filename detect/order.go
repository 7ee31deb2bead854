package detect

import (
	"sync"

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
// into chainCache, and later acquisitions with the same chain cost one
// lookup. A hash collision would skip one validation; at 64 bits that is
// far less likely than any other failure.

// held is one lock a goroutine holds.
type held struct {
	lock  *core.Lock
	meta  *core.Meta
	count int    // holds (a Monitor's re-entry)
	try   bool   // taken by TryLock: no edge into it
	chain uint64 // hash of the chain of held locks up to and including this one
}

type gstate struct {
	held []held
}

// gshard maps goroutine IDs to what they hold. Each goroutine touches only
// its own entry; the shard lock is uncontended except against Dump.
type gshard struct {
	mu   sync.Mutex
	m    map[int64]*gstate
	free []*gstate // recycled states, so a goroutine's outermost Lock does not allocate
	_    [24]byte
}

var gshards [128]gshard

func gshardOf(g int64) *gshard { return &gshards[uint64(g)%uint64(len(gshards))] }

// chainCache holds the hashes of validated chains.
var chainCache sync.Map // uint64 -> struct{}

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

func (engine) Acquired(l *core.Lock, k *core.Kind, g int64, try bool) {
	m := l.Meta(k)
	if m.Site() == "" {
		m.SetSiteOnce(callerSite())
	}
	sh := gshardOf(g)
	sh.mu.Lock()
	gs := sh.m[g]
	if gs == nil {
		if sh.m == nil {
			sh.m = map[int64]*gstate{}
		}
		if n := len(sh.free); n > 0 {
			gs, sh.free = sh.free[n-1], sh.free[:n-1]
		} else {
			gs = &gstate{}
		}
		sh.m[g] = gs
	}
	var prev uint64
	if n := len(gs.held); n > 0 {
		prev = gs.held[n-1].chain
	}
	chain := mix(prev, m.ID, try)
	gs.held = append(gs.held, held{lock: l, meta: m, count: 1, try: try, chain: chain})
	var before []held
	if !try && len(gs.held) > 1 {
		if _, ok := chainCache.Load(chain); !ok {
			before = append([]held(nil), gs.held[:len(gs.held)-1]...)
		}
	}
	sh.mu.Unlock()
	if before != nil {
		validate(g, before, m, chain)
	}
}

func (engine) Released(l *core.Lock, g int64) {
	sh := gshardOf(g)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	gs := sh.m[g]
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
	gs.held = append(gs.held[:i], gs.held[i+1:]...)
	// Unlocked out of order: the chains above i change.
	for j := i; j < len(gs.held); j++ {
		var prev uint64
		if j > 0 {
			prev = gs.held[j-1].chain
		}
		gs.held[j].chain = mix(prev, gs.held[j].meta.ID, gs.held[j].try)
	}
	if len(gs.held) == 0 {
		delete(sh.m, g)
		gs.held = gs.held[:0]
		if len(sh.free) < 16 {
			sh.free = append(sh.free, gs)
		}
	}
}

func (engine) Reentered(l *core.Lock, g int64, delta int) {
	sh := gshardOf(g)
	sh.mu.Lock()
	if gs := sh.m[g]; gs != nil {
		for i := len(gs.held) - 1; i >= 0; i-- {
			if gs.held[i].lock == l {
				gs.held[i].count += delta
				break
			}
		}
	}
	sh.mu.Unlock()
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
	g        int64   // the goroutine that first took to while holding from
	stack    []Frame // where
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
// closes a cycle.
func validate(g int64, before []held, m *core.Meta, chain uint64) {
	var reports []*Report
	var stack []Frame
	graphMu.Lock()
	to := nodeFor(m)
	for _, h := range before {
		from := nodeFor(h.meta)
		if from == to || from.out[to.meta.ID] != nil {
			continue
		}
		if stack == nil {
			stack = callers()
		}
		if path := findPath(to, from); path != nil {
			if r := orderReport(path, from, to, g, stack); r != nil {
				reports = append(reports, r)
			}
		}
		e := &edge{from: from, to: to, g: g, stack: stack}
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
	chainCache.Store(chain, struct{}{})
	graphMu.Unlock()
	for _, r := range reports {
		deliver(r)
	}
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
// the new edge from -> to, or nil if this cycle was reported before.
func orderReport(path []*edge, from, to *node, g int64, stack []Frame) *Report {
	ids := make([]uint64, 0, len(path)+1)
	r := &Report{Kind: LockOrder}
	for _, e := range path {
		ids = append(ids, e.from.meta.ID)
		r.Steps = append(r.Steps, Step{Goroutine: e.g, Holds: lockInfo(e.from.meta), WaitsFor: lockInfo(e.to.meta), Stack: e.stack})
	}
	ids = append(ids, from.meta.ID)
	r.Steps = append(r.Steps, Step{Goroutine: g, Holds: lockInfo(from.meta), WaitsFor: lockInfo(to.meta), Stack: stack})
	if !firstReport(cycleKey(LockOrder, ids), ids) {
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
		chainCache.Delete(c)
	}
	delete(graph, id)
}
