package core

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/locksmith-go/locksmith/internal/compat"
)

// Lock is an owner-tracking lock word plus a queue of parked waiters.
// The zero value is an unlocked lock. It is not reentrant: re-entry is the
// wrapper's business (monitor.Monitor counts holds itself).
//
// The state word packs, as sync.Mutex's does:
//
//	bits 4..63  the holder's goroutine ID, or 0 when free
//	bit 3       durable: a waiter parked durably in a testing/synctest
//	            bubble (durDom) is queued; until none is, no goroutine of
//	            another domain takes the lock (see bubble.go and below)
//	bit 2       starving: a waiter has waited longer than
//	            starvationThreshold; until the queue drains (or a waiter
//	            that has not waited that long is served) the lock is handed
//	            from Release straight to the first waiter, and newcomers
//	            queue instead of barging (sync.Mutex's starvation mode)
//	bit 1       woken: a waiter was dequeued and sent a token, and has not
//	            yet either taken the lock or gone back to the queue; while
//	            it is set, Release wakes nobody else (sync.Mutex's mutexWoken)
//	bit 0       waiting: the queue is not empty (changed only under mu)
//
// Invariants:
//   - the owner bits change only by CompareAndSwap, so exactly one goroutine
//     wins a free lock and only the holder can free it or hand it on;
//   - waiting is set, under mu, by the same CompareAndSwap that is a waiter's
//     last look at the owner before it queues, so a Release either sees the
//     waiter (its fast CompareAndSwap fails and it wakes one) or happened
//     before that look (which then finds the lock free): no lost wakeup;
//   - the woken waiter clears woken in the CompareAndSwap that takes the
//     lock or re-queues it, so a Release that skipped waking is followed
//     by a retry or a later Release that wakes;
//   - starving is only ever set together with a held lock and a waiter in
//     the queue, so the Release that sees it always finds mu's queue
//     non-empty or clears the bit while releasing;
//   - durable is set exactly while ndurable > 0, and then every goroutine
//     that holds the lock, is queued, is the woken waiter in flight or is
//     a releaser that has set woken and not yet dequeued a waiter belongs
//     to durDom (see "Sharing across bubbles" below).
//
// # Sharing across bubbles
//
// Whoever wakes a waiter is the holder that releases, or another waiter
// that gives up (abandon passes its wakeup on). A waiter inside a bubble
// parks on its own channel, durably, only if all of those are in its
// bubble and stay so while it is queued:
//   - when it queues (under mu, in the CompareAndSwap that reads the
//     owner), the owner, every queued waiter and the woken waiter in
//     flight are of its bubble, and no releaser is between setting woken
//     and dequeuing the waiter it wakes, which may then be this one
//     (durableOK);
//   - while it is queued (durable set), a goroutine of another domain
//     takes no lock: its slow paths refuse (mayTake) and it queues, behind
//     the durable waiters, since a durable waiter queues only behind
//     waiters of its own bubble and re-queues at the front. So a foreign
//     waiter is woken only after every durable waiter has left the queue.
//
// Otherwise it parks on a semaphore that anyone may release (sema): it is
// then not durably blocked (synctest.Wait does not count it as idle, and
// the bubble's clock does not advance while only it and sleepers remain),
// but nothing can kill the program. Goroutines outside bubbles always park
// on their own channel: a channel made outside any bubble may be used from
// anywhere.
//
// Rejected alternative: a lock that remembers the domains it has ever
// seen and parks non-durably for good once it has seen two. A package-level
// lock used by one bubbled test after another would lose durability at the
// second test; what matters is who can wake a waiter while it waits, which
// the rules above check exactly.
type Lock struct {
	state atomic.Int64
	// pc is where the holder took the lock: the return PC into the
	// caller of the public method (one word, no stack), or 0 if the path
	// that took it does not record it (HolderPC). The holder writes it
	// right after it takes the lock, and only when it differs from the
	// word there (the assembly compares, then stores with a plain MOVQ,
	// atomic for an aligned word on amd64); it is read by the holder
	// itself (a recursive Lock's panic) and by the detector, atomically:
	// a holder in a verified cycle may be a timed waiter that gave up
	// and took the lock again meanwhile, so a report can name that later
	// site, never a torn one.
	pc   atomic.Uintptr
	mu   sync.Mutex // guards q, ndurable and the links and handoff of queued waiters
	q    waitList
	meta Pointer[Meta] // detection metadata, created on first need

	durDom   atomic.Uint64 // the durable waiters' domain; meaningful while durable is set; written under mu
	ndurable int32         // queued durable waiters
	// wokenDom is, while woken is set, the domain of the goroutine that
	// may wake a waiter next: the releaser's from the CompareAndSwap that
	// sets woken (the releaser stores it just before) until its wakeOne
	// dequeues a waiter, then that waiter's (stored by wakeOne under mu),
	// which passes its wakeup on itself if it does not use it.
	wokenDom atomic.Uint64

	// extra is a reentrant wrapper's hold count beyond the first, for
	// Dump: written only by the holder (SetExtraHolds), read by anyone
	// (ExtraHolds). It is 0 whenever the lock is free or held once.
	extra atomic.Int32
	// seen holds the engine's Meta flags for a lock that has no Meta yet
	// (SeenFlags, OrSeen); a Meta made for the lock gets them. It fills
	// padding after extra: the struct's size is unchanged.
	seen compat.Uint32
}

// SeenFlags returns the flags OrSeen has set on l.
func (l *Lock) SeenFlags() uint32 { return l.seen.Load() }

// OrSeen sets flags f on l, for a lock that may have no Meta: the Meta
// made for it later gets them in its Flags (see Lock.Meta). A caller
// that saw no Meta before calling OrSeen must look again after it
// (PeekMeta) and set f on the Meta it finds there: newMeta copies the
// flags after it publishes its Meta, so one of the two sees the other.
func (l *Lock) OrSeen(f uint32) { l.seen.Or(f) }

// SetExtraHolds publishes the holder's hold count beyond the first, n,
// if the lock has detection metadata (only such locks appear in Dump).
// The holder calls it whenever the count changes other than by the first
// acquisition or the last release, so the published count is 0 again when
// the lock is released.
//
// It is exact for any lock that had metadata when its holder last changed
// the count: always in Order mode (the first acquisition makes it) and for
// named locks. A lock given metadata by another goroutine while held more
// than once (a report naming it) shows one hold until its holder next
// locks or unlocks it.
//
// Rejected alternative: storing whether or not the lock has metadata. An
// atomic store (an exchange on amd64) costs about as much as the whole
// re-entry pair of a Monitor without it; the load of the metadata pointer
// sits in the cache line the holder has just used.
func (l *Lock) SetExtraHolds(n int) {
	if l.meta.Load() != nil {
		l.extra.Store(int32(n))
	}
}

// SetHolderPC records pc as where the holder took the lock (see
// Lock.pc); only the holder calls it, after it has taken the lock.
func (l *Lock) SetHolderPC(pc uintptr) {
	if l.pc.Load() != pc { // a lock is mostly retaken at its last site: no store
		l.pc.Store(pc)
	}
}

// HolderPC returns where the holder took the lock, a return PC, or 0
// where that is not recorded. Outside the holder, the answer may name a
// later holder's site (see Lock.pc).
func (l *Lock) HolderPC() uintptr { return l.pc.Load() }

// ExtraHolds returns the hold count beyond the first published by the
// holder.
func (l *Lock) ExtraHolds() int { return int(l.extra.Load()) }

const (
	flagWaiting = 1 << iota
	flagWoken
	flagStarving
	flagDurable
	ownerShift = iota
	flagMask   = 1<<ownerShift - 1
)

// starvationThreshold is how long a waiter may lose to newcomers before the
// lock switches to handing off in FIFO order; sync.Mutex uses the same.
const starvationThreshold = int64(time.Millisecond)

// Owner returns the goroutine ID of the holder, or 0.
func (l *Lock) Owner() int64 { return l.state.Load() >> ownerShift }

// FastAcquire takes the lock for g if it is free and nobody waits: the
// uncontended fast path, one CompareAndSwap.
func (l *Lock) FastAcquire(g int64) bool { return l.state.CompareAndSwap(0, g<<ownerShift) }

// TryAcquire takes the lock for g if it is free, whatever the queue, but
// never ahead of a starving waiter.
func (l *Lock) TryAcquire(g int64) bool {
	return l.FastAcquire(g) || l.tryAcquire(g, 0)
}

// tryAcquire takes the lock if it is free and nobody is starving, clearing
// the flags in clear in the same step. It reads before it writes, so that
// spinning waiters do not keep stealing the cache line from the holder.
// While durable waiters are queued it refuses a goroutine of another
// domain (tryAcquireDurable).
func (l *Lock) tryAcquire(g int64, clear int64) bool {
	for {
		s := l.state.Load()
		if s>>ownerShift != 0 || s&flagStarving != 0 {
			return false
		}
		if s&flagDurable != 0 {
			return l.tryAcquireDurable(g, clear)
		}
		if l.state.CompareAndSwap(s, s&^clear|g<<ownerShift) {
			return true
		}
	}
}

// tryAcquireDurable is tryAcquire while durable waiters are queued: only a
// goroutine of their bubble may take the lock (mayTake). It decides under
// mu, under which the durable flag and durDom do not change. Without mu,
// the CompareAndSwap could succeed in another durable era than the one
// whose durDom mayTake read: between the two, the last durable waiter of
// the caller's bubble leaves, a waiter of another bubble queues durably
// behind a holder of its own, that holder releases, and the state word is
// the very value loaded before (free, waiting, durable); the caller would
// then hold the lock in front of another bubble's durable waiters.
func (l *Lock) tryAcquireDurable(g int64, clear int64) bool {
	d := CurDomain() // outside mu: on a cache miss it reads the goroutine's stack
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		s := l.state.Load()
		if s>>ownerShift != 0 || s&flagStarving != 0 {
			return false
		}
		if s&flagDurable != 0 && !l.mayTake(&d) {
			return false
		}
		if l.state.CompareAndSwap(s, s&^clear|g<<ownerShift) {
			return true
		}
	}
}

// Release frees the lock if g holds it and reports whether it did; it
// changes nothing when g is not the holder.
func (l *Lock) Release(g int64) bool {
	return l.FastRelease(g) || l.releaseSlow(g)
}

// FastRelease frees the lock if g holds it and nobody waits, with one
// CompareAndSwap, and reports whether it did.
func (l *Lock) FastRelease(g int64) bool { return l.state.CompareAndSwap(g<<ownerShift, 0) }

// releaseSlow is kept out of line so that Release, its CompareAndSwap and
// a call, inlines into Unlock.
//
//go:noinline
func (l *Lock) releaseSlow(g int64) bool {
	ok, stranded := l.releaseStranded(g)
	strand(stranded)
	return ok
}

// releaseStranded is releaseSlow, except that it returns, instead of
// panicking with it, the message of a waiter that the wakeup passed over
// (see wakeable), for a caller that has more to do before it panics.
func (l *Lock) releaseStranded(g int64) (ok bool, stranded string) {
	for {
		s := l.state.Load()
		if s>>ownerShift != g {
			return false, ""
		}
		if s&flagStarving != 0 {
			return true, l.handOff()
		}
		n := s & flagMask
		wake := s&flagWaiting != 0 && s&flagWoken == 0
		if wake {
			n |= flagWoken
			l.wokenDom.Store(uint64(CurDomain())) // no waiter chosen yet: see wokenDom
		}
		if l.state.CompareAndSwap(s, n) {
			if wake {
				if testHookWake != nil {
					testHookWake(l)
				}
				return true, l.wakeOne()
			}
			return true, ""
		}
	}
}

// handOff passes the held lock to the first waiter, in starvation mode.
// Starvation mode ends when the queue is empty or the waiter served had not
// waited past the threshold. It returns the message of a waiter it passed
// over (see wakeable), or "".
func (l *Lock) handOff() (stranded string) {
	l.mu.Lock()
	w, stranded := l.wakeable()
	if w == nil {
		// Everyone left (cancelled): release, and leave starvation mode.
		for {
			s := l.state.Load()
			if l.state.CompareAndSwap(s, s&flagMask&^flagStarving) {
				break
			}
		}
		l.mu.Unlock()
		return stranded
	}
	l.remove(w)
	w.handoff = true
	sema := w.sema
	calm := l.q.head == nil || nanotime()-w.start < starvationThreshold
	for {
		s := l.state.Load()
		n := s&flagMask | w.g<<ownerShift
		if calm {
			n &^= flagStarving
		}
		if l.state.CompareAndSwap(s, n) {
			break
		}
	}
	l.mu.Unlock()
	w.wake(sema)
	return stranded
}

// testHookWake, if set (by tests), runs in releaseSlow between the
// CompareAndSwap that sets woken and wakeOne.
var testHookWake func(*Lock)

// wakeOne sends a token to the first waiter it may wake. The caller has
// set woken. It returns the message of a waiter it passed over (see
// wakeable), or "".
func (l *Lock) wakeOne() (stranded string) {
	l.mu.Lock()
	w, stranded := l.wakeable()
	if w == nil {
		// The last waiter left before we got here: nobody to wake.
		l.clearFlags(flagWoken)
		l.mu.Unlock()
		return stranded
	}
	l.remove(w)
	l.wokenDom.Store(uint64(w.dom))
	sema := w.sema
	l.mu.Unlock()
	w.wake(sema)
	return stranded
}

// wakeable returns the first queued waiter that the calling goroutine may
// wake, or nil. A durable waiter of another domain, which the Go runtime
// would not let it wake (a fatal error), comes off the queue: it is left
// parked, and stranded says why, for strand to report once the lock is
// consistent again. The rules on durable parking make that impossible but
// in one case: a goroutine that holds the lock while it runs
// synctest.Test counts, for the runtime, as a goroutine of that bubble
// until Test returns, so a goroutine of the bubble that waits for the lock
// parks durably; it can only be woken by that holder, which cannot
// release the lock before Test returns, and Test reports the deadlock.
// When the holder then releases the lock, the bubble is over and its
// blocked goroutines are left blocked for good: the lock goes on without
// them. The caller holds l.mu.
func (l *Lock) wakeable() (w *waiter, stranded string) {
	for w = l.q.head; w != nil; w = l.q.head {
		msg, bad := w.foreignWaker()
		if !bad {
			return w, stranded
		}
		l.remove(w)
		stranded = msg
	}
	return nil, stranded
}

// strand panics with the message of a waiter that wakeable left parked,
// if any, in an error matching ErrStranded. Callers call it last, once the
// lock has been released or passed on and every other wakeup made, so
// that the lock stays usable by everyone else.
func strand(msg string) {
	if msg != "" {
		panic(Misuse(msg, ErrStranded))
	}
}

func (l *Lock) clearFlags(f int64) {
	for {
		s := l.state.Load()
		if s&f == 0 || l.state.CompareAndSwap(s, s&^f) {
			return
		}
	}
}

// Starving reports whether the lock is in starvation mode (for tests).
func (l *Lock) Starving() bool { return l.state.Load()&flagStarving != 0 }
