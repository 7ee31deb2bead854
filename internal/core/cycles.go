package core

import "errors"

// Hop is one step of a wait-for cycle: goroutine G waits for Lock,
// which is held by the next hop's goroutine (the last hop's lock is held
// by the first hop's goroutine).
type Hop struct {
	G     int64
	Lock  *Lock
	Class *Class
	// Read: G waits to take Lock (an RWLock's writer lock) for reading.
	// HolderRead: the next goroutine holds Lock for reading, and G is the
	// writer waiting for the readers to leave. Otherwise the next
	// goroutine holds Lock exclusively (for an RWLock: holds, or drains
	// readers for, the write lock).
	Read       bool
	HolderRead bool
	epoch      uint64
}

func stepOf(w wait) Hop {
	return Hop{G: w.g, Lock: w.lock, Class: w.class, Read: w.awaits == waitRead, HolderRead: w.awaits == waitDrain, epoch: w.epoch}
}

// maxWalk bounds a walk; a longer chain is not reported.
const maxWalk = 4096

// waitsFor appends to buf the goroutines that w's goroutine waits for
// now, and returns it: the owner of the lock (a Mutex, a Monitor, an
// RWLock's writer lock, which a queued writer and a blocked first-time
// reader both wait for), or, for a writer draining an RWLock, every
// reader. A goroutine never waits for itself: a stale registration of a
// goroutine that was handed the lock, or admitted as a reader, has no
// edge.
func waitsFor(w wait, buf []int64) []int64 {
	switch w.awaits {
	case waitRead:
		if w.rw.holdsReadNow(w.g) {
			return buf // admitted by the writer's Unlock; not yet unregistered
		}
		fallthrough
	case waitLock:
		if o := w.lock.Owner(); o != 0 && o != w.g {
			return append(buf, o)
		}
		return buf
	case waitDrain:
		if w.lock.Owner() != w.g {
			return buf
		}
		for _, r := range w.rw.ReaderIDs() {
			if r != w.g {
				buf = append(buf, r)
			}
		}
		return buf
	}
	return buf
}

// edge reports whether w's goroutine still waits for h (the edge check of
// the verifying walk).
func edge(w wait, h int64) bool {
	if h == w.g {
		return false
	}
	switch w.awaits {
	case waitRead:
		return !w.rw.holdsReadNow(w.g) && w.lock.Owner() == h
	case waitLock:
		return w.lock.Owner() == h
	case waitDrain:
		return w.lock.Owner() == w.g && w.rw.holdsReadNow(h)
	}
	return false
}

// walker is one depth-first search of the wait-for graph. It lives on
// the walking goroutine's stack: a walk through single-owner waits (every
// Mutex and Monitor, and RW waits other than a draining writer's)
// allocates nothing unless it finds a cycle or visits more than len(vis)
// goroutines.
type walker struct {
	root   int64 // the goroutine the search must come back to
	budget int
	n      int            // goroutines recorded in vis
	vis    [32]int64      // goroutines already searched
	more   map[int64]bool // and beyond len(vis)
}

// visit records g and reports whether it was already recorded.
func (wk *walker) visit(g int64) bool {
	for _, v := range wk.vis[:wk.n] {
		if v == g {
			return true
		}
	}
	if wk.more[g] {
		return true
	}
	if wk.n < len(wk.vis) {
		wk.vis[wk.n] = g
		wk.n++
		return false
	}
	if wk.more == nil {
		wk.more = map[int64]bool{}
	}
	wk.more[g] = true
	return false
}

// dfs returns the path from cur back to the root, or nil.
func (wk *walker) dfs(cur wait) []Hop {
	var one [1]int64
	for _, h := range waitsFor(cur, one[:0]) {
		if wk.budget--; wk.budget < 0 {
			return nil
		}
		if h == wk.root {
			return []Hop{stepOf(cur)}
		}
		if wk.visit(h) {
			continue
		}
		if next, ok := waitingOn(h); ok {
			if rest := wk.dfs(next); rest != nil {
				return append([]Hop{stepOf(cur)}, rest...)
			}
		}
	}
	return nil
}

// walk searches the wait-for graph depth first from w for a path back to
// w's goroutine: lock -> owner (or, for a draining writer, each reader) ->
// what that goroutine waits for ... It returns the cycle, or nil.
func walk(w *waiter) []Hop {
	wk := walker{root: w.g, budget: maxWalk}
	wk.visit(w.g)
	return wk.dfs(waitOf(w))
}

// checkCycle returns the wait-for cycle that w closes, or nil. It finds a
// cycle, then walks it a second time, and returns it only if every
// goroutine of the second walk has the registration it had in the first
// and every edge still holds. Why that suffices: every goroutine in the
// cycle other than the caller was registered with the same epoch at its
// read in the first walk and at its read in the second, so it was blocked,
// without releasing anything, for the whole interval between; each edge
// read of the second walk (the owner, or the reader, that the goroutine
// waits for) falls inside the interval of the goroutine it names. So at
// the instant between the two walks every edge held at once: a real
// deadlock, which then cannot go away by itself.
//
// Exactly one goroutine of a cycle is refused: the one that registered
// last (the largest epoch). A cycle is closed by the registration of its
// last member (members hold their locks from before they register, and a
// registered goroutine takes no new lock), so that member's walk always
// sees it; the others may see it too if they walk at the same moment, and
// must then park rather than refuse as well.
//
// The engine's Stacks runs between the two walks, so that the stacks in a
// verified cycle were taken while every goroutine of it waited where the
// cycle says: a goroutine that gave up its wait before them (a
// LockTimeout that expired, a LockContext cancelled) changes its
// registration, and the second walk rejects the cycle, and one that gives
// up after them was still waiting when they were taken. Taken after the
// second walk, they could show a goroutine of the cycle where it moved on
// to, and make one problem two.
func checkCycle(w *waiter) *Cycle {
	first := walk(w)
	if first == nil {
		return nil
	}
	var stacks any
	if engine != nil {
		stacks = engine.Stacks(first)
	}
	for i, s := range first {
		if s.epoch > w.epoch {
			return nil
		}
		cur, ok := waitingOn(s.G)
		if !ok || stepOf(cur) != s {
			return nil
		}
		if !edge(cur, first[(i+1)%len(first)].G) {
			return nil
		}
	}
	return &Cycle{Hops: first, Stacks: stacks}
}

// Cycle is a verified wait-for cycle that the calling goroutine
// (Hops[0].G) would close, as Engine.Deadlock receives it.
type Cycle struct {
	Hops []Hop
	// Stacks is what Engine.Stacks returned for Hops, taken while every
	// goroutine of the cycle waited where Hops say (see checkCycle).
	Stacks any
	// BacksOff says that the refused wait returns an error to its caller
	// (LockContext, LockTimeout and their reader and writer forms), which
	// is expected to back off; it is false for a wait whose refusal
	// panics (Lock, RLock, a Cond wait's reacquire).
	BacksOff bool
}

// deadlock turns a cycle into the error to return, through the engine.
func deadlock(c *Cycle) error {
	if engine == nil {
		return errors.New("locksmith: deadlock") // only without package detect, which every lock package links
	}
	return engine.Deadlock(c)
}
