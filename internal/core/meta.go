package core

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"
)

// Meta is a lock's identity for detection. It is created the first time
// detection needs it, and holds no pointer to the lock, so the lock can be
// collected; its ID is then passed to Engine.Forget.
type Meta struct {
	ID    uint64
	Class *Class
	Addr  uintptr
	// Flags holds bits kept by package detect in Order mode.
	Flags    atomic.Uint32
	lock     weak.Pointer[Lock]
	name     atomic.Pointer[string]
	site     atomic.Pointer[[]uintptr] // first acquisition seen in Order mode
	waitSite atomic.Pointer[[]uintptr] // first Lock that had to wait (Cycles and Order modes)
	lost     lostHolds                 // holds that Cond waits could not retake (see LoseHolds)
	idx      int                       // position in metas.all; guarded by metas.mu
	engined  bool                      // made by Engine.NewMeta
}

// Engined reports whether m was made by the engine's NewMeta, and so
// carries the engine's per-lock state (a lock can need metadata before
// the engine is installed, during package initialisation).
func (m *Meta) Engined() bool { return m.engined }

// Lock returns the lock m describes, or nil if it has been collected.
func (m *Meta) Lock() *Lock { return m.lock.Value() }

// metas holds every live Meta, for Dump. A Meta holds its lock only
// weakly; the lock's cleanup removes the Meta.
//
// Rejected alternative: a map by ID. Locks that each object carries are
// made and collected in waves (all that died since the last collection
// are forgotten together), and inserting into and deleting from a map
// that grows and empties so took a tenth of the CPU time of nesting a
// new pair of locks in Order mode; a slice with each Meta's index costs
// an append and a swap.
var metas struct {
	mu  sync.Mutex
	all []*Meta
}

// Metas calls f for every lock that has metadata, without holding the
// registry's lock while f runs.
func Metas(f func(*Meta)) {
	metas.mu.Lock()
	all := slices.Clone(metas.all)
	metas.mu.Unlock()
	for _, m := range all {
		f(m)
	}
}

var nextID atomic.Uint64

// Meta returns l's metadata, creating it on first use.
//
// What a lock's metadata costs the runtime: the weak pointer (one
// allocation, the handle) and the cleanup (two: the argument's box and
// the closure), three of the four allocations per lock, and together 12 %
// of the CPU profile of nesting a pair of new locks in Order mode, plus
// the cleanup's run when the lock is collected. Both are needed as things
// stand: the weak pointer tells the detector whether a held record's lock
// is still held by its goroutine, and the cleanup forgets the lock. A scan
// of the registry's weak pointers once per collection could replace the
// cleanups (two allocations less per lock, at the price of work in
// proportion to the live locks on every collection), and a lock-class
// design would make per-instance metadata unnecessary in Order mode.
func (l *Lock) Meta(k *Class) *Meta {
	if m := l.meta.Load(); m != nil {
		return m
	}
	var m *Meta
	if engine != nil {
		m = engine.NewMeta()
		m.engined = true
	} else {
		m = new(Meta)
	}
	m.ID, m.Class, m.Addr, m.lock = nextID.Add(1), k, uintptr(unsafe.Pointer(l)), weak.Make(l)
	if !l.meta.CompareAndSwap(nil, m) {
		return l.meta.Load()
	}
	metas.mu.Lock()
	m.idx = len(metas.all)
	metas.all = append(metas.all, m)
	metas.mu.Unlock()
	// m holds l only weakly, so it may be the cleanup's argument.
	runtime.AddCleanup(l, forget, m)
	return m
}

// PeekMeta returns l's metadata or nil, without creating it.
func (l *Lock) PeekMeta() *Meta { return l.meta.Load() }

func forget(m *Meta) {
	metas.mu.Lock()
	all := metas.all
	last := all[len(all)-1]
	all[m.idx], last.idx = last, m.idx
	all[len(all)-1] = nil
	metas.all = all[:len(all)-1]
	if c := cap(metas.all); c > 1024 && len(metas.all) < c/4 {
		metas.all = slices.Clip(slices.Clone(metas.all)) // give back what a wave of locks left
	}
	metas.mu.Unlock()
	if engine != nil {
		engine.Forget(m)
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
