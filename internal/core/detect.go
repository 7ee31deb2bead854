package core

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"
)

// Detection modes; package detect documents them.
const (
	ModeOff int32 = iota
	ModeCycles
	ModeOrder
)

// modeRecheck, or'ed into the mode word, sends lock operations to the
// outlined Order-mode hooks even in Off and Cycles modes, until the
// recheck function installed with SetRecheck says it is done. Values at or
// above ModeOrder are exactly "Order, or a recheck pending", so the fast
// paths still test the word with one comparison.
const modeRecheck int32 = 4

// mode is the mode word: a Mode value, plus modeRecheck.
var mode atomic.Int32

func init() { mode.Store(ModeCycles) }

// Mode returns the detection mode in force.
func Mode() int32 { return mode.Load() &^ modeRecheck }

// SetMode sets the detection mode (package detect calls it), keeping a
// pending recheck, and the fast words of the assembly fast paths with it.
func SetMode(m int32) {
	for {
		old := mode.Load()
		if mode.CompareAndSwap(old, m|old&modeRecheck) {
			break
		}
	}
	updateFastWords()
}

// OrderOn reports whether the lock must call Acquired and Released: in
// Order mode, or while a recheck is pending. The lock fast
// paths call it on every acquisition and release: one load of a word that
// is only written when the configuration changes.
func OrderOn() bool { return mode.Load() >= ModeOrder }

// recheck is set by SetRecheck during initialisation and read afterwards.
var recheck func(g int64) (done bool)

// SetRecheck makes the lock operations of every goroutine call f (with
// the goroutine's ID) until f returns true. Package detect uses it in a
// test binary to read its environment variables again once go test's
// log of the variables a test consults has started. It must be called
// during package initialisation.
func SetRecheck(f func(g int64) (done bool)) {
	recheck = f
	mode.Or(modeRecheck)
	updateFastWords()
}

// settle runs the pending recheck for g and reports whether Order mode is
// on. It is reached only from the outlined hooks, while mode has
// modeRecheck set.
func settle(g int64) (order bool) {
	if recheck(g) {
		mode.And(^modeRecheck)
		updateFastWords()
	}
	return Mode() == ModeOrder
}

// Engine is what package detect installs: report building and the
// lock-order graph. Methods are called without any core lock held.
type Engine interface {
	// Deadlock receives a verified wait-for cycle that the calling
	// goroutine (cycle[0].G) would close, and returns the error that
	// Lock panics with and LockContext returns.
	Deadlock(cycle []Step) error
	// Acquired and Released are called in Order mode only.
	Acquired(l *Lock, k *Kind, g int64, try bool)
	Released(l *Lock, g int64)
	// Parked is called when a goroutine has registered as blocked, in
	// Cycles and Order modes, so that the wait-timeout watchdog can arm.
	Parked()
	// NewMeta returns a zero Meta for a lock that needs metadata. The
	// engine allocates it together with its own per-lock state, so that
	// a lock's detection state costs one allocation.
	NewMeta() *Meta
	// Forget is called when a lock that had metadata is garbage collected.
	Forget(id uint64)
}

var engine Engine

// SetEngine installs e. It must be called during package initialisation.
func SetEngine(e Engine) { engine = e }

// Acquired forwards Order-mode bookkeeping for a lock g has just taken to
// the engine, which may deliver a LockOrder report. If the engine does not
// return (the reporter panicked, or ended the goroutine with
// runtime.Goexit as t.FailNow does), the acquisition is undone before the
// panic or the exit goes on: the record is dropped and the lock released,
// waking a waiter if there is one. So a Lock, TryLock or LockContext that
// panics never leaves its caller holding the lock, whichever path the
// panic came from.
//
// While a recheck is pending, Acquired and Released run it first, and forward only in Order mode.
func Acquired(l *Lock, k *Kind, g int64, try bool) {
	if mode.Load()&modeRecheck != 0 && !settle(g) {
		return
	}
	done := false
	defer func() {
		if !done {
			engine.Released(l, g)
			l.Release(g)
		}
	}()
	engine.Acquired(l, k, g, try)
	done = true
}

// Released forwards Order-mode bookkeeping to the engine.
func Released(l *Lock, g int64) {
	if mode.Load()&modeRecheck != 0 && !settle(g) {
		return
	}
	engine.Released(l, g)
}

// Meta is a lock's identity for detection. It is created the first time
// detection needs it, and holds no pointer to the lock, so the lock can be
// collected; its ID is then passed to Engine.Forget.
type Meta struct {
	ID   uint64
	Kind *Kind
	Addr uintptr
	// Flags holds bits kept by package detect in Order mode.
	Flags    atomic.Uint32
	lock     weak.Pointer[Lock]
	name     atomic.Pointer[string]
	site     atomic.Pointer[[]uintptr] // first acquisition seen in Order mode
	waitSite atomic.Pointer[[]uintptr] // first Lock that had to wait (Cycles and Order modes)
	lost     lostHolds                 // holds that Cond waits could not retake (see LoseHolds)
}

// Lock returns the lock m describes, or nil if it has been collected.
func (m *Meta) Lock() *Lock { return m.lock.Value() }

// metas holds every live Meta, for Dump. A Meta holds its lock only
// weakly; the lock's cleanup removes the Meta.
var metas struct {
	mu sync.Mutex
	m  map[uint64]*Meta
}

// Metas calls f for every lock that has metadata, without holding the
// registry's lock while f runs.
func Metas(f func(*Meta)) {
	metas.mu.Lock()
	all := make([]*Meta, 0, len(metas.m))
	for _, m := range metas.m {
		all = append(all, m)
	}
	metas.mu.Unlock()
	for _, m := range all {
		f(m)
	}
}

var nextID atomic.Uint64

// Meta returns l's metadata, creating it on first use.
func (l *Lock) Meta(k *Kind) *Meta {
	if m := l.meta.Load(); m != nil {
		return m
	}
	var m *Meta
	if engine != nil {
		m = engine.NewMeta()
	} else {
		m = new(Meta)
	}
	m.ID, m.Kind, m.Addr, m.lock = nextID.Add(1), k, uintptr(unsafe.Pointer(l)), weak.Make(l)
	if !l.meta.CompareAndSwap(nil, m) {
		return l.meta.Load()
	}
	metas.mu.Lock()
	if metas.m == nil {
		metas.m = map[uint64]*Meta{}
	}
	metas.m[m.ID] = m
	metas.mu.Unlock()
	runtime.AddCleanup(l, forget, m.ID)
	return m
}

// PeekMeta returns l's metadata or nil, without creating it.
func (l *Lock) PeekMeta() *Meta { return l.meta.Load() }

func forget(id uint64) {
	metas.mu.Lock()
	delete(metas.m, id)
	metas.mu.Unlock()
	if engine != nil {
		engine.Forget(id)
	}
}

// Name returns the name given with SetName, or "".
func (m *Meta) Name() string {
	if p := m.name.Load(); p != nil {
		return *p
	}
	return ""
}

// SetName names the lock in reports.
func (m *Meta) SetName(s string) { m.name.Store(&s) }

// SitePCs returns the stack (program counters) of the first Lock the
// detector recorded, or nil. Symbolising waits until a report needs it.
func (m *Meta) SitePCs() []uintptr {
	if p := m.site.Load(); p != nil {
		return *p
	}
	return nil
}

// HasSite reports whether a first-lock site was recorded.
func (m *Meta) HasSite() bool { return m.site.Load() != nil }

// SetSiteOnce records the first-lock stack; later calls do nothing. The
// caller must not change *pcs afterwards.
func (m *Meta) SetSiteOnce(pcs *[]uintptr) { m.site.CompareAndSwap(nil, pcs) }

// WaitSitePCs returns the stack of the first Lock that had to wait for
// the lock, or nil. In Cycles mode, which records nothing on the fast
// path, it is the only site known.
func (m *Meta) WaitSitePCs() []uintptr {
	if p := m.waitSite.Load(); p != nil {
		return *p
	}
	return nil
}

// --- The registry of blocked goroutines -------------------------------

const shards = 64

type shard struct {
	mu sync.Mutex
	m  map[int64]*waiter
	_  [40]byte // keep shards on separate cache lines
}

var (
	registry [shards]shard
	epochs   atomic.Uint64
)

func shardOf(g int64) *shard { return &registry[uint64(g)%shards] }

func register(w *waiter) {
	s := shardOf(w.g)
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[int64]*waiter)
	}
	w.epoch = epochs.Add(1)
	s.m[w.g] = w
	s.mu.Unlock()
}

func unregister(w *waiter) {
	s := shardOf(w.g)
	s.mu.Lock()
	if s.m[w.g] == w {
		delete(s.m, w.g)
	}
	s.mu.Unlock()
}

// wait is a snapshot of one registered wait.
type wait struct {
	g     int64
	lock  *Lock
	kind  *Kind
	epoch uint64
	rw    *RWLock
	mode  uint8
}

func waitOf(w *waiter) wait {
	return wait{g: w.g, lock: w.lock, kind: w.kind, epoch: w.epoch, rw: w.rw, mode: w.mode}
}

// waitingOn returns what g is blocked on, with the registration's epoch.
func waitingOn(g int64) (wait, bool) {
	s := shardOf(g)
	s.mu.Lock()
	w := s.m[g]
	var out wait
	if w != nil {
		out = waitOf(w)
	}
	s.mu.Unlock()
	return out, w != nil
}

// nanotime is the runtime's monotonic clock, the one the scheduler uses.
// It is real time everywhere, also inside a testing/synctest bubble, where
// time.Now and time.Since read the bubble's fake clock: the detector's
// clock (starvation mode, wait ages, the wait-timeout watchdog) must not
// mix the two, and fake time must not decide whether a lock is starving.
// The runtime keeps this linkname working on purpose (runtime/time_nofake.go,
// go.dev/issue/67401).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Now returns the clock that WaitInfo.Since is measured on.
func Now() int64 { return nanotime() }

// Step is one edge pair of a wait-for cycle: goroutine G waits for Lock,
// which is held by the next step's goroutine (the last step's lock is held
// by the first step's goroutine).
type Step struct {
	G    int64
	Lock *Lock
	Kind *Kind
	// Read: G waits to take Lock (an RWLock's writer lock) for reading.
	// HolderRead: the next goroutine holds Lock for reading, and G is the
	// writer waiting for the readers to leave. Otherwise the next
	// goroutine holds Lock exclusively (for an RWLock: holds, or drains
	// readers for, the write lock).
	Read       bool
	HolderRead bool
	epoch      uint64
}

func stepOf(w wait) Step {
	return Step{G: w.g, Lock: w.lock, Kind: w.kind, Read: w.mode == waitRead, HolderRead: w.mode == waitDrain, epoch: w.epoch}
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
	switch w.mode {
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
	switch w.mode {
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
func (wk *walker) dfs(cur wait) []Step {
	var one [1]int64
	for _, h := range waitsFor(cur, one[:0]) {
		if wk.budget--; wk.budget < 0 {
			return nil
		}
		if h == wk.root {
			return []Step{stepOf(cur)}
		}
		if wk.visit(h) {
			continue
		}
		if next, ok := waitingOn(h); ok {
			if rest := wk.dfs(next); rest != nil {
				return append([]Step{stepOf(cur)}, rest...)
			}
		}
	}
	return nil
}

// walk searches the wait-for graph depth first from w for a path back to
// w's goroutine: lock -> owner (or, for a draining writer, each reader) ->
// what that goroutine waits for ... It returns the cycle, or nil.
func walk(w *waiter) []Step {
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
func checkCycle(w *waiter) []Step {
	first := walk(w)
	if first == nil {
		return nil
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
	return first
}

// deadlock turns a cycle into the error to return, through the engine.
func deadlock(cycle []Step) error {
	if engine == nil {
		return errors.New("locksmith: deadlock") // only without package detect, which every lock package links
	}
	return engine.Deadlock(cycle)
}

// WaitInfo describes one goroutine blocked on a locksmith lock.
type WaitInfo struct {
	G     int64
	Lock  *Lock
	Kind  *Kind
	Since int64 // on the Now clock
	// Read: the goroutine waits for a read lock. Drain: it holds the
	// write lock of an RWLock and waits for the readers to leave.
	Read  bool
	Drain bool
	w     *waiter
}

// MarkTimedOut records that a wait-timeout report was made for this wait
// and reports whether this call was the first to do so.
func (wi WaitInfo) MarkTimedOut() bool { return wi.w.timed.CompareAndSwap(false, true) }

// Waiting calls f for every goroutine blocked on a locksmith lock, without
// holding any registry lock while f runs.
func Waiting(f func(WaitInfo)) {
	var all []WaitInfo
	for i := range registry {
		s := &registry[i]
		s.mu.Lock()
		for _, w := range s.m {
			all = append(all, WaitInfo{G: w.g, Lock: w.lock, Kind: w.kind, Since: w.start,
				Read: w.mode == waitRead, Drain: w.mode == waitDrain, w: w})
		}
		s.mu.Unlock()
	}
	for _, wi := range all {
		f(wi)
	}
}
