package core

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/locksmith-go/locksmith/internal/gid"
	"github.com/locksmith-go/locksmith/internal/rt"
)

// Domains: which testing/synctest bubble a goroutine belongs to.
//
// Go (1.26) kills the program, with no chance to recover, when a goroutine
// durably blocked in a bubble is woken from outside that bubble: a send on
// (or close of) a channel made in the bubble, or a sync.Cond notification
// of a goroutine of the bubble, from a goroutine outside it or in another
// bubble. A sync.Mutex has no such check: its semaphore may be released
// from anywhere, but a goroutine blocked on it is not durably blocked (the
// bubble's clock does not advance for it, and synctest.Wait does not
// return while it is blocked). So each waiter chooses, when it parks,
// between durable parking, safe only if every goroutine that may wake it
// is in its bubble, and parking that anyone may end. The code that chooses
// needs the domain of the goroutines involved, defined here.
//
// A Domain is 0 for "none recorded", DomOutside for goroutines outside any
// bubble, bubble n's ID plus one for the goroutines of bubble n,
// DomUnknown for a goroutine in a bubble whose ID could not be read (it is
// treated as foreign to every other domain, and never parks durably), and
// DomMixed, in a record, for "seen from more than one domain".
type Domain uint64

const (
	DomOutside Domain = 1
	DomUnknown Domain = 1<<24 - 1 // also the largest Domain the cache can hold
	DomMixed   Domain = ^Domain(0)
)

// String names d for messages: "bubble N" (the runtime's bubble ID, as
// goroutine headers show it), "no bubble", "an unknown bubble", "several
// domains", or "no domain".
func (d Domain) String() string {
	switch {
	case d == 0:
		return "no domain"
	case d == DomOutside:
		return "no bubble"
	case d == DomUnknown:
		return "an unknown bubble"
	case d == DomMixed:
		return "several domains"
	case d.Bubble():
		return "bubble " + strconv.FormatUint(uint64(d)-1, 10)
	}
	return "domain " + strconv.FormatUint(uint64(d), 10)
}

// bubble reports whether d is a bubble that a waiter can park durably in.
func (d Domain) Bubble() bool { return d > DomOutside && d < DomUnknown }

// inBubble reports whether the calling goroutine runs in a synctest bubble.
// Inside a bubble time.Now carries no monotonic clock reading (the runtime
// returns the bubble's fake time and omits it), outside it always carries
// one. This is the only public trace of bubble membership: the
// internal/synctest package that knows it cannot be linked to. It costs
// one clock read.
func inBubble() bool {
	t := time.Now()
	return t == t.Round(0)
}

// The goroutine -> domain cache. A goroutine's domain never changes while
// it runs (a goroutine is created in its bubble or outside any), with one
// exception: the caller of synctest.Test is counted in the bubble while it
// waits for the bubble to end, and outside it before and after. So an
// entry filled by the goroutine itself never goes stale but for that
// caller's: one it filled before it called Test says DomOutside while Test
// runs. holderIn, where that answer would change a park, asks the bubble's
// root cache (below) whenever the cache says DomOutside. An entry filled
// from a dump holds only lasting answers (see fillFromDump). Goroutine IDs
// are not reused, except that the callbacks of C threads into Go share
// goroutines (see package gid), which run on in their domain, outside any
// bubble. The cache is direct-mapped by
// goroutine ID: a colliding goroutine overwrites the slot, and a miss only
// costs the lookup again. Each slot packs goid<<24 | domain in one word,
// so that a lookup is a load and a fill a store, with nothing to allocate.
const (
	domCacheSize = 1024
	domBits      = 24
	maxCachedG   = 1<<(64-domBits) - 1
)

// A slot's value is all its readers take from it: its loads and stores are
// hidden from the race detector (see racehb_race.go), or a goroutine would
// be ordered after the colliding goroutine, or the dump's filler, that
// stored the slot before it. The root cache's are too.
var domCache [domCacheSize]atomic.Uint64

// DomCacheSize is the size of the domain cache, for tests.
const DomCacheSize = domCacheSize

func cachedDomain(g int64) (Domain, bool) {
	RaceHide()
	e := domCache[uint64(g)%domCacheSize].Load()
	RaceShow()
	if e == 0 || int64(e>>domBits) != g {
		return 0, false
	}
	return Domain(e & (1<<domBits - 1)), true
}

func cacheDomain(g int64, d Domain) {
	if g <= 0 || g > maxCachedG || d == 0 || d > DomUnknown {
		return
	}
	RaceHide()
	domCache[uint64(g)%domCacheSize].Store(uint64(g)<<domBits | uint64(d))
	RaceShow()
}

// CurDomain returns the calling goroutine's domain: a cache load when the
// goroutine has asked before, else the clock test and, in a bubble only,
// the goroutine's own stack header (once per goroutine).
func CurDomain() Domain {
	g := gid.Get()
	if d, ok := cachedDomain(g); ok {
		return d
	}
	d := DomOutside
	if inBubble() {
		var buf [1024]byte // a header with long labels is cut: DomUnknown, safe
		n := runtime.Stack(buf[:], false)
		d = headerDomain(buf[:n])
	}
	cacheDomain(g, d)
	return d
}

// InBubble reports whether the calling goroutine runs in a testing/synctest
// bubble (for package detect's watchdog).
func InBubble() bool { return CurDomain() != DomOutside }

// headerDomain reads the bubble from a goroutine header (rt.ParseHeader):
// "goroutine 7 [chan receive, synctest bubble 3]:". A header without a
// readable bubble ID names no bubble the code can match: DomUnknown.
func headerDomain(stack []byte) Domain {
	h, ok := rt.ParseHeader(stack)
	if !ok {
		return DomUnknown
	}
	return bubbleDomain(h.Bubble)
}

// bubbleDomain returns the Domain of the bubble of ID id, from a header:
// DomUnknown for 0 (none) or an ID too large for a Domain.
func bubbleDomain(id uint64) Domain {
	if id == 0 || id+1 >= uint64(DomUnknown) {
		return DomUnknown
	}
	return Domain(id + 1)
}

// domainOf returns goroutine g's Domain. A cache miss costs a dump of every
// goroutine's stack (which stops the world for a moment), so
// it is asked only by a goroutine that is about to park inside a bubble,
// about a lock holder it has not met on a slow path. A goroutine that is
// not found (it has exited) is reported as DomUnknown. An answer of
// DomOutside means "not seen in a bubble": it may be a goroutine of a
// bubble that the runtime had detached for a moment (see fillFromDump).
func domainOf(g int64) Domain {
	d, _ := lookupDomain(g)
	return d
}

// lookupDomain is domainOf that also reports whether g was missing from
// the dump it took (gone, with d DomUnknown): g had exited by then, or is
// the goroutine of a C thread's callbacks whose thread has exited (see
// package gid); either way it runs no code of ours again.
func lookupDomain(g int64) (d Domain, gone bool) {
	if d, ok := cachedDomain(g); ok {
		return d, false
	}
	if g == gid.Get() {
		return CurDomain(), false
	}
	return fillDump(allStacks(), g)
}

// holderIn reports whether goroutine o, a lock's holder (0: none), is no
// waker of another domain for a waiter of bubble d: it is of d, or is the
// caller of synctest.Test of bubble d (counted in d while Test runs, though
// the cache may say DomOutside: see isRoot), or it has exited still
// holding the lock (held, asked after the dump, says whether o holds it
// still), and so wakes nobody again. It may cost a dump of all goroutines
// (see domainOf): only goroutines about to park in a bubble ask.
//
// A holder that has exited stays the holder for good (IDs are not reused,
// and only the holder may release): a wait behind it, parked durably,
// lets synctest report the bubble's deadlock at once, where a park on sem
// would leave the bubble hanging until go test's -timeout. Two kinds of
// goroutine are missing from a dump without having exited, and may run
// again: that of a C thread's callbacks whose thread has exited (see
// package gid), and the runtime's finalizer and cleanup goroutines
// between callbacks. Should one of them release the lock while the waiter
// waits durably, the release panics with ErrStranded (wakeable), as for
// the caller of synctest.Test; docs/synctest.md says so.
func holderIn(o int64, d Domain, held func(int64) bool) bool {
	if o == 0 {
		return true
	}
	od, gone := lookupDomain(o)
	switch {
	case od == d:
		return true
	case gone:
		return held(o)
	case od == DomOutside:
		return isRoot(o, d)
	}
	return false
}

// The root cache: the caller of synctest.Test, the root, of each bubble
// seen in a dump, so that a holder cached as DomOutside is told from the
// root of a waiter's bubble without a dump per park. A bubble has one root
// for its whole life, and bubble IDs are not reused: an entry never goes
// stale, and is asked only by waiters of its bubble, which live no longer
// than the bubble. Slots pack goid<<24 | domain, as the domain cache's do.
var rootCache [64]atomic.Uint64

func cachedRoot(d Domain) (int64, bool) {
	RaceHide()
	e := rootCache[uint64(d)%uint64(len(rootCache))].Load()
	RaceShow()
	if e == 0 || Domain(e&(1<<domBits-1)) != d {
		return 0, false
	}
	return int64(e >> domBits), true
}

func cacheRoot(d Domain, g int64) {
	if !d.Bubble() || g <= 0 || g > maxCachedG {
		return
	}
	RaceHide()
	rootCache[uint64(d)%uint64(len(rootCache))].Store(uint64(g)<<domBits | uint64(d))
	RaceShow()
}

// isRoot reports whether g runs synctest.Test for bubble d now. A miss in
// the root cache costs a dump, which fills it.
func isRoot(g int64, d Domain) bool {
	if !d.Bubble() {
		return false
	}
	if r, ok := cachedRoot(d); ok {
		return r == g
	}
	fillFromDump(allStacks(), g)
	r, ok := cachedRoot(d)
	return ok && r == g
}

// allStacks returns a dump of every goroutine's stack, as runtime.Stack
// writes it, whole.
func allStacks() []byte {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// headerOf returns goroutine g's header line in dump, an allStacks
// result, or "" if g is not in it.
func headerOf(dump []byte, g int64) string {
	prefix := []byte("goroutine " + strconv.FormatInt(g, 10) + " [")
	var header string
	eachLine(dump, func(line []byte) bool {
		if bytes.HasPrefix(line, prefix) {
			header = string(line)
			return false
		}
		return true
	})
	return header
}

// fillFromDump caches the domain of goroutines of bubbles in an
// all-goroutines dump and returns g's. A header shows the bubble the
// runtime associates with the goroutine at that moment, which is not
// always its own, so only answers that stay true are cached: a bubble
// named in the header of a goroutine parked in an ordinary wait.
//   - The runtime detaches a goroutine from its bubble while it starts a
//     garbage collection or assists one (runtime.gcStart, gcAssistAlloc),
//     where it may block or be preempted, and a dump then shows it with
//     no bubble. Cached as DomOutside, that answer would outlive the
//     moment: the goroutine's own CurDomain would say outside, and its
//     next wait would park on a channel of its bubble as if made outside
//     any, which a waker of another domain then sends on (a fatal error),
//     or which a holder of another domain leaves its bubble durably
//     blocked on (a deadlock panic of synctest). So a header without a
//     bubble is answered DomOutside for this once and not cached. The
//     answer only serves durableOK, where a goroutine of the waiter's
//     bubble reported outside makes the waiter park on sem: safe.
//   - Any goroutine is put in a bubble while it runs one of that bubble's
//     timers, so a running or runnable goroutine's bubble is not cached
//     either (rt.Transient).
//   - The caller of synctest.Test is counted in the bubble while it waits
//     for the bubble to end (internal/synctest.Run is on its stack), and
//     outside it afterwards, so it is reported but not cached; it goes in
//     the root cache instead (see isRoot).
//
// Rejected alternative: caching DomOutside from dumps too, which would
// spare a later dump for a holder outside bubbles that only ever took
// locks on the fast path. Nothing in a dump tells such a holder from a
// goroutine of a bubble detached for a moment.
func fillFromDump(dump []byte, g int64) Domain {
	d, _ := fillDump(dump, g)
	return d
}

// fillDump is fillFromDump that also reports whether g is missing from
// dump (gone).
func fillDump(dump []byte, g int64) (found Domain, gone bool) {
	found, gone = DomUnknown, true
	for gs := rt.Goroutines(dump); gs.Next(); {
		h, stack := gs.Header, gs.Stack
		d := DomOutside
		bubbled := h.Bubble != 0
		if bubbled {
			d = bubbleDomain(h.Bubble)
		}
		if h.ID == g {
			found, gone = d, false
		}
		root := strings.HasPrefix(h.State, "synctest.Run") || stack.HasFrame("internal/synctest.Run")
		if bubbled && root {
			cacheRoot(d, h.ID)
		}
		if bubbled && !root && !rt.Transient(h.State) {
			cacheDomain(h.ID, d)
		}
	}
	return found, gone
}
