package core

import (
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/locksmith-go/locksmith/internal/chunked"
	"github.com/locksmith-go/locksmith/internal/compat"
	"github.com/locksmith-go/locksmith/internal/rt"
)

// Meta is a lock's identity for detection. It is created the first time
// detection needs it, and holds no pointer to the lock, so the lock can be
// collected; the collection that finds the lock unreachable clears its
// weak pointer, and the registry's next scan (see scanMetas) passes the
// Meta to Engine.Forget.
type Meta struct {
	ID    uint64
	Class *Class
	Addr  uintptr
	// Flags holds FlagGone, and bits kept by package detect in Order
	// mode.
	Flags    compat.Uint32
	lock     compat.Weak[Lock]
	name     atomic.Pointer[string]
	site     atomic.Pointer[[]uintptr] // first acquisition seen in Order mode
	waitSite atomic.Pointer[[]uintptr] // first Lock that had to wait (Cycles and Order modes)
	lost     atomic.Pointer[lostHolds] // holds that Cond waits could not retake (see LoseHolds); made on first need
	//lint:ignore U1000 holds fields only in race builds (racehb_race.go)
	metaRace      // racehb.go, racehb_race.go
	engined  bool // made by Engine.NewMeta
}

// FlagGone, in Meta.Flags, is set when the registry forgets the Meta: its
// lock was found collected, or queued for finalization (see Lock.Meta).
// It is a bit of Flags rather than a field of its own so that package
// detect learns it in the same atomic load as its own bits (a call into
// the race runtime under -race). Package detect's bits are below it.
const FlagGone = 1 << 31

// Engined reports whether m was made by the engine's NewMeta, and so
// carries the engine's per-lock state (a lock can need metadata before
// the engine is installed, during package initialisation).
func (m *Meta) Engined() bool { return m.engined }

// Lock returns the lock m describes, or nil if it has been collected.
func (m *Meta) Lock() *Lock { return m.lock.Value() }

// Gone reports whether m has been forgotten (passed to Engine.Forget).
// The lock may still be in use if a finalizer revived it; Lock.Meta then
// gives it a new Meta.
func (m *Meta) Gone() bool { return m.Flags.Load()&FlagGone != 0 }

// metas holds every live Meta, for Dump and for the scan that finds the
// collected ones, each beside a copy of its weak pointer, so that the
// scan reads the registry in order and touches only the Metas it drops.
// A Meta holds its lock only weakly.
//
// Rejected alternatives: a map by ID. Locks that each object carries are
// made and collected in waves (all that died since the last collection
// are forgotten together), and inserting into and deleting from a map
// that grows and empties so took a tenth of the CPU time of nesting a
// new pair of locks in Order mode; a list costs an append per lock, and
// the scan a swap per lock it drops. A slice for the list, which copied
// itself whole as it grew and again to give back what a wave left (see
// package chunked).
var metas struct {
	mu  sync.Mutex
	all chunked.List[metaEntry]
}

type metaEntry struct {
	lock compat.Weak[Lock] // m.lock
	m    *Meta
}

// lockMetas locks the registry, every Meta made so far in its list (see
// addMeta).
func lockMetas() {
	metas.mu.Lock()
	drainMetas()
}

// Metas calls f for every lock that has metadata, without holding the
// registry's lock while f runs.
func Metas(f func(*Meta)) {
	lockMetas()
	all := make([]*Meta, metas.all.Len())
	for i := range all {
		all[i] = metas.all.At(i).m
	}
	metas.mu.Unlock()
	for _, m := range all {
		f(m)
	}
}

var nextID atomic.Uint64

// Meta returns l's metadata, creating it on first use.
//
// What a lock's metadata costs: a slot in one of the engine's slabs
// (the Meta with the graph node, many to an allocation: package
// detect's lockState), an entry in the registry, and the weak pointer,
// whose runtime handle is the one allocation per lock left. The weak
// pointer is the dearest part: weak.Make looks for a handle among the
// specials of the lock's span under the span's lock, allocates a
// special record under the heap's global special lock and a 16-byte
// handle, and links the record into the span's list under the span's
// lock again; that is a large share of the CPU profile of nesting a
// pair of new locks in Order mode (profile bench/detectcost's
// BenchmarkMutexFirstNesting/mutex.Mutex/order), and no other way to
// learn that a lock was collected costs less. With all it costs later
// (the sweep that frees the handle and its record, the marking of the
// handle at every collection), the two weak pointers of a new pair alone
// take most of Order mode's whole first nesting when the locks
// are used in the order they were made: the span's list of records is
// sorted by address and searched from the lowest up, so each new record,
// at the highest address so far, walks the whole list (go test -run '^$'
// -bench 'OrderFirstNesting/weak' ./detect). Nothing runs when the lock is collected:
// scanMetas finds it, once per collection, among all the registered
// Metas.
//
// Rejected alternatives to a weak pointer per lock. One per slab of
// Metas: a weak pointer names one object, and the locks are the user's
// objects, not the slab; a weak pointer to the slab would say when all
// of its locks' Metas are unreferenced, never which lock died. A weak
// pointer made only when a lock enters the order graph: both locks of
// a first nesting enter it, and a held record in Order mode reads the
// weak pointer of the lock it names to find records of collected
// locks. Telling a collected lock by its memory (the Meta keeping the
// lock's address, the lock pointing back): the collector does not
// clear what it frees, so a dead lock would look alive until its
// memory was reused, and reading it would race with its next owner. A
// cleanup per lock (runtime.AddCleanup) that forgets it: two
// allocations more per lock (the argument's box and the closure) and a
// special record, together a sizeable share of the CPU time of nesting a pair
// of new locks in Order mode (BenchmarkMutexFirstNesting in
// bench/detectcost), and its run per collected lock went
// through the cleanup queue one call at a time. The scan costs work in
// proportion to the live locks on every collection instead, as the
// collector's own marking of their metadata does (the heap holds at
// least a Meta per live lock), on the cleanup goroutine, not while the
// world is stopped: with 100,000 live locks a scan takes a fraction of
// the time of a forced collection of the same heap (go test -run '^$' -bench
// MetaScan -count 5 ./internal/core).
//
// A lock whose Meta is gone (found unreachable) and that is used again
// was revived by a finalizer: the weak pointer that the collection
// cleared stays nil, so the lock gets a new Meta, with a new ID and a
// weak pointer that works, and the holds that Cond waits lost move over.
func (l *Lock) Meta(k *Class) *Meta {
	if m := l.meta.Load(); m != nil && m.Flags.Load()&FlagGone == 0 {
		return m
	}
	return l.newMeta(k)
}

func (l *Lock) newMeta(k *Class) *Meta {
	for {
		old := l.meta.Load()
		if old != nil && old.Flags.Load()&FlagGone == 0 {
			return old
		}
		// The engine's slab and the ID counter are shared by every lock,
		// and only their values matter: hidden from the race detector (see
		// racehb_race.go).
		var m *Meta
		RaceHide()
		id := nextID.Add(1)
		if engine != nil {
			m = engine.NewMeta()
		}
		RaceShow()
		if m != nil {
			m.engined = true
		} else {
			m = new(Meta)
		}
		m.ID, m.Class, m.Addr, m.lock = id, k, uintptr(unsafe.Pointer(l)), compat.MakeWeak(l)
		raceMadeMeta(m)
		if !l.meta.CompareAndSwap(old, m) {
			continue
		}
		if f := l.seen.Load(); f != 0 { // after the CompareAndSwap: see OrSeen
			m.Flags.Or(f)
		}
		if old != nil {
			if ol := old.lost.Load(); ol != nil {
				ol.mu.Lock()
				if len(ol.list) > 0 {
					nl := m.lostHolds()
					nl.mu.Lock()
					nl.list = append(nl.list, ol.list...)
					nl.n.Store(int32(len(nl.list)))
					nl.mu.Unlock()
				}
				ol.list = nil
				ol.n.Store(0)
				ol.mu.Unlock()
			}
		}
		addMeta(m)
		armScan()
		return m
	}
}

// Holds reports whether g holds m's lock (for reading, if read: m's class
// is then an RW one), as far as the lock's words tell without making the
// lock reachable: for a scan that runs unasked (package detect's sweep of
// held records), which must not keep locks alive through a collection it
// overlaps (see scanMetas). A collected lock is held by nobody; one
// found unreachable that the sweep has not reached yet reads as it was
// left. A read hold of an RWLock with overflow readers is taken to be
// held: the overflow map cannot be read so.
func (m *Meta) Holds(g int64, read bool) bool {
	if !read {
		o, ok := m.peekOwner()
		return ok && o == g
	}
	slots, overflow, ok := m.peekReaders()
	return ok && (overflow || slices.Contains(slots[:], g))
}

// peekOwner returns the owner of m's lock, read without making the lock
// reachable (see Holds), and false if the lock was collected.
func (m *Meta) peekOwner() (int64, bool) {
	var w [1]int64
	ok := rt.WeakLoad(m.lock, unsafe.Offsetof(Lock{}.state), w[:])
	return w[0] >> ownerShift, ok
}

// peekReaders returns the reader slots of m's lock, an RWLock, and
// whether it has overflow readers too, read without making the lock
// reachable (see Holds), and false if the lock was collected.
func (m *Meta) peekReaders() (slots [rwSlots]int64, overflow, ok bool) {
	var w [1 + rwSlots]int64 // rs, then the slots
	ok = rt.WeakLoad(m.lock, unsafe.Offsetof(RWLock{}.rs), w[:])
	copy(slots[:], w[1:])
	return slots, w[0]>>rsOvShift != 0, ok
}

// The slots follow rs: Holds loads them together.
var _ [0]struct{} = [unsafe.Offsetof(RWLock{}.slots) - unsafe.Offsetof(RWLock{}.rs) - 8]struct{}{}

// PeekMeta returns l's metadata or nil, without creating it. The Meta
// may be gone (see Lock.Meta).
func (l *Lock) PeekMeta() *Meta { return l.meta.Load() }

// The scan of the registry runs from a cleanup attached to a throw-away
// object, that is once per garbage collection, while any Meta is
// registered.
var (
	scanArmed atomic.Bool
	scanMu    sync.Mutex // one scan at a time: cleanups may run concurrently
	scanDead  []*Meta    // the scan's scratch, guarded by scanMu
)

type gcTick struct{ _ *byte } // a pointer, so that it is not a tiny allocation

// armScan is called by every lock's first Meta: scanArmed's value is all
// it reads, hidden from the race detector (see racehb_race.go).
func armScan() {
	RaceHide()
	if !scanArmed.Load() && scanArmed.CompareAndSwap(false, true) {
		compat.AddCleanup(&gcTick{}, scanTick, 0)
	}
	RaceShow()
}

func scanTick(int) {
	scanArmed.Store(false)
	if scanMetas() {
		evictMetas() // before go1.24 only: the registry's bound (meta_nogo124.go)
		armScan()
	}
}

// scanChunk is how many Metas the scan looks at per hold of metas.mu, so
// that a lock taking its first Meta waits for at most that many.
const scanChunk = 1024

// scanMetas forgets every registered Meta whose lock has been collected,
// and reports whether any Meta is left. It visits the registry from its
// end, so that swapping the last entry into a vacated place moves one
// already visited (or registered since the scan began, left for the
// next scan).
//
// It asks rt.WeakCleared, never the weak pointer's Value: the scan runs
// on the cleanup goroutine, often while the next collection marks (the
// goroutine leak profile's collection follows a forced one at once), and
// Value then shades the lock, which would keep every lock with metadata,
// the waiters queued on it and whatever the objects around it point to,
// reachable through that collection, and hide every goroutine blocked on
// them from the goroutine leak profile. A lock whose span the sweep has
// not reached yet is found at the next scan.
func scanMetas() (left bool) {
	scanMu.Lock()
	defer scanMu.Unlock()
	dead := scanDead[:0]
	lockMetas()
	for i, n := metas.all.Len()-1, 0; i >= 0; i, n = i-1, n+1 {
		if n == scanChunk {
			metas.mu.Unlock()
			n = 0
			metas.mu.Lock() // only this scan removes: i is still in range
		}
		e := metas.all.At(i)
		if !rt.WeakCleared(e.lock) { // not Value: see scanMetas
			continue
		}
		m := e.m
		metas.all.RemoveSwap(i)
		m.Flags.Or(FlagGone)
		dead = append(dead, m)
	}
	left = metas.all.Len() > 0
	metas.mu.Unlock()
	if len(dead) > 0 && engine != nil {
		engine.Forget(dead)
	}
	clear(dead)
	scanDead = dead
	if cap(scanDead) > 1024 && len(dead) < cap(scanDead)/4 {
		scanDead = nil // give back what a wave of locks left
	}
	return left
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

// SitePCs returns the stack of the first Lock the detector recorded (an
// fpstack record), or nil. Symbolising waits until a report needs it.
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
// the lock (an fpstack record), or nil. In Cycles mode, which records nothing on the fast
// path, it is the only site known.
func (m *Meta) WaitSitePCs() []uintptr {
	if p := m.waitSite.Load(); p != nil {
		return *p
	}
	return nil
}
