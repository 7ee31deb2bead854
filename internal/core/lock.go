package core

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locksmith-go/locksmith/internal/fpstack"
	"github.com/locksmith-go/locksmith/internal/gid"
)

// Class describes a lock type (lockdep calls this a lock class) for reports: its name as users write it.
type Class struct {
	Name      string // "mutex.Mutex"
	Reentrant bool
	RW        bool // the Lock is the writer lock of an RWLock (see RWOf)
}

var (
	ClassMutex     = &Class{Name: "mutex.Mutex"}
	ClassMonitor   = &Class{Name: "monitor.Monitor", Reentrant: true}
	ClassRWMutex   = &Class{Name: "mutex.RWMutex", RW: true}
	ClassRWMonitor = &Class{Name: "monitor.RWMonitor", Reentrant: true, RW: true}
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
	mu    sync.Mutex // guards q, ndurable and the links and handoff of queued waiters
	q     waitList
	meta  Pointer[Meta] // detection metadata, created on first need

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
}

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

// ExtraHolds returns the hold count beyond the first published by the
// holder.
func (l *Lock) ExtraHolds() int { return int(l.extra.Load()) }

var ncpu = runtime.NumCPU()

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

// waiter is a goroutine parked in Lock's slow path.
//
// A token is "woken, retry" or, with handoff, "yours" (or, with cancelled,
// "your context is done"). It travels on ch, or, for a waiter in a bubble
// that cannot park durably, on sem, a sync.Mutex used as a binary
// semaphore: locked means no token, Unlock posts one, and the waiter's Lock
// takes it (a sync.Mutex may be unlocked by any goroutine, and its
// semaphore has no bubble check). At most one token is ever outstanding:
// only the goroutine that dequeued the waiter under mu posts one.
//
// Rejected alternative: pooling waiters (and their channels) across calls.
// A channel created inside a testing/synctest bubble must not be used from
// outside it, and a goroutine is durably blocked only on a channel created
// in its own bubble, so each slow-path entry makes its own channel. The
// allocation happens only when a goroutine is about to park, which costs
// far more than the allocation.
type waiter struct {
	g       int64
	lock    *Lock
	class   *Class
	dom     Domain        // the goroutine's domain (bubble.go)
	ch      chan struct{} // buffered(1); made by the waiter when it first parks on it
	sem     sync.Mutex    // the token when sema: see above
	prev    *waiter       // guarded by lock.mu
	next    *waiter       // guarded by lock.mu
	inq     bool          // guarded by lock.mu: in lock's queue
	durable bool          // guarded by lock.mu: this park is durable (counted in ndurable while queued)
	// The holder and state the last durable park was chosen in, and the
	// holder's domain as the domain cache then had it (0: not cached),
	// for checkWaker's message; written under lock.mu.
	durHolder    int64
	durHolderDom Domain
	durState     int64
	sema         bool        // guarded by lock.mu: this park is on sem, not ch
	cancelled    error       // written under lock.mu before the token is posted: dequeued by cancel, with this error
	handoff      bool        // written under lock.mu before the token is sent: the lock was handed to g
	start        int64       // when the goroutine started to wait (nanotime)
	epoch        uint64      // set by register, read by walkers under the shard lock
	timed        atomic.Bool // a wait-timeout report was made for this wait
	// For a wait on an RWLock (rwlock.go): the lock, and what is awaited
	// (waitLock: lock's owner; waitRead: the writer, for a read hold;
	// waitDrain: the readers, by the writer that holds lock). Set before
	// register and never changed.
	rw   *RWLock
	mode uint8
	// For a writer draining an RWLock's readers, whom any leaving reader
	// may wake (post): how it parks now (parkDurable, parkSema, parkChan;
	// 0 before its first choice), and whether a token is on sem.
	pmode  atomic.Uint32
	posted atomic.Bool
}

// Park modes of a draining writer (waiter.pmode).
const (
	parkChan    = 1 + iota // on ch, made outside any bubble: anyone may wake it
	parkDurable            // on ch, made in its bubble: only its bubble may
	parkSema               // on sem: anyone may
)

// post gives w a token unless one is pending, for a waiter that several
// goroutines may wake at once (a draining writer): on sem when sema, else
// on ch (nil until w first parks on it: then nothing is sent, and w looks
// again before it parks). A sync.Mutex must not be unlocked twice, hence
// posted: false exactly while sem holds no token, except between w's Lock
// of sem and its reset of posted, when a wakeup is not needed (w has not
// looked yet).
func (w *waiter) post(sema bool) {
	if sema {
		if w.posted.CompareAndSwap(false, true) {
			w.sem.Unlock()
		}
		return
	}
	select {
	case w.ch <- struct{}{}:
	default: // a token is pending, enough
	}
}

// newWaiter returns the waiter of g's wait on l, in the calling
// goroutine's domain. In a bubble its sem holds no token, so that a park
// on it blocks.
func newWaiter(g int64, l *Lock, k *Class) *waiter {
	w := &waiter{g: g, lock: l, class: k, dom: CurDomain(), start: nanotime()}
	if w.dom != DomOutside {
		w.sem.Lock()
	}
	return w
}

// setPark records, under the queue's mutex, how w parks this time:
// durably on ch (durable, which the caller has checked is safe), on sem (a
// goroutine in a bubble that may not park durably), or on ch (a goroutine
// outside any bubble, whose channel anyone may use).
func (w *waiter) setPark(durable bool) {
	w.durable = durable
	w.sema = w.dom != DomOutside && !durable
}

// makeChan makes w's channel, if w parks on it and has none yet. It runs
// in w's goroutine, so that in a bubble the channel is the bubble's and
// the park on it durable.
func (w *waiter) makeChan() {
	if !w.sema && w.ch == nil {
		w.ch = make(chan struct{}, 1)
	}
}

// wake posts the token to w, which the caller has dequeued under mu (and
// read sema there).
func (w *waiter) wake(sema bool) {
	if sema {
		w.sem.Unlock()
		return
	}
	w.ch <- struct{}{} // buffered: never blocks
}

// awaitToken takes the token of a waiter that was dequeued by someone else.
func (w *waiter) awaitToken(sema bool) {
	if sema {
		w.sem.Lock()
		return
	}
	<-w.ch
}

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

// Acquire blocks until g holds the lock. ctx may be nil for a wait that
// cannot be cancelled. On failure (ctx done, or the wait would close a
// deadlock cycle) it returns the error and g does not hold the lock.
// The caller has already tried the fast path and checked for re-entry.
func (l *Lock) Acquire(g int64, ctx context.Context, k *Class) error {
	return l.AcquireDeadline(g, ctx, time.Time{}, k)
}

// AcquireDeadline is Acquire that also gives up at deadline, unless it is
// the zero Time, returning context.DeadlineExceeded. The timer is made
// only when the goroutine is about to park, after spinning, and at most
// once per call: a lock taken by spinning costs no timer.
//
// Rejected alternative: the caller wrapping a context.WithDeadline and
// calling Acquire. That allocates a context, its done channel and a timer
// before spinning, so every contended call pays for them, also the many
// that spinning serves.
func (l *Lock) AcquireDeadline(g int64, ctx context.Context, deadline time.Time, k *Class) error {
	var dt deadlineTimer
	return l.acquireDeadline(g, ctx, deadline, k, &dt)
}

// acquireDeadline is AcquireDeadline with the timer of a park on ch in
// *dt, which a later wait of the same call may restart (RWLock.LockDeadline);
// it is stopped when acquireDeadline returns.
func (l *Lock) acquireDeadline(g int64, ctx context.Context, deadline time.Time, k *Class, dt *deadlineTimer) error {
	if spin(l, g, 0) {
		return nil
	}
	w := newWaiter(g, l, k)
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
	}
	var expired <-chan time.Time // armed at the first park on ch of a wait with a deadline
	// A registered waiter is visible to other goroutines' cycle walks. It
	// unregisters before it abandons the wait, so that no walk sees it
	// waiting once it has decided to return: a cycle through it would no
	// longer be real. After it has taken the lock, the stale entry until
	// unregister can only lead a walk back to the waiter itself, which is
	// not a cycle through the walker.
	registered := false
	// A park on sem cannot select on done or expired: callbacks cancel it
	// instead (l.cancel); stop and dstop unregister them.
	var stop, dstop func() bool
	finish := func() {
		if registered {
			unregister(w)
		}
		dt.stop()
		if stop != nil {
			stop()
		}
		if dstop != nil {
			dstop()
		}
	}
	acquired := func() error {
		finish()
		return nil
	}
	leave := func(err error) error {
		finish()
		l.abandon(w)
		return err
	}
	var clear, set int64 // clear: flagWoken once woken; set: flagStarving once starving
	for {
		if (stop != nil || dstop != nil) && clear != 0 {
			// Woken, lost the race: a cancelling callback, which cancels
			// only a queued waiter, may have run while this one was not
			// queued. If so, pass the wakeup on.
			var err error
			switch {
			case ctx != nil && ctx.Err() != nil:
				err = ctx.Err()
			case !deadline.IsZero() && time.Until(deadline) <= 0:
				err = context.DeadlineExceeded
			}
			if err != nil {
				finish()
				l.passOn(w)
				return err
			}
		}
		l.mu.Lock()
		if l.queueOrAcquire(w, clear, set) {
			l.mu.Unlock()
			return acquired()
		}
		// A waiter that was woken and lost the race goes back to the front,
		// so barging cannot push it to the end of the line every time.
		l.enqueue(w, clear != 0)
		sema := w.sema
		w.makeChan()
		l.mu.Unlock()

		// Registered whatever the mode: a goroutine that parks while
		// detection is Off may still be parked when Cycles mode is turned
		// on, and must then be visible to the walks of goroutines that
		// park later, or a cycle through it would go unseen. In Off mode
		// that costs a shard's mutex and a map write on each side of the
		// park, next to the park itself; nothing else (no site, no
		// watchdog, no walk).
		//
		// Rejected alternative: registering only when detection is on,
		// and re-checking the mode when woken. A goroutine in a deadlock
		// is never woken, so it would stay invisible for good.
		if !registered {
			register(w)
			registered = true
			if Mode() != ModeOff {
				// In Cycles mode nothing records where a lock was first
				// taken (that would cost the fast path); the first Lock
				// that has to wait for it is recorded instead, so that
				// reports can say where an unnamed lock is used.
				if m := l.Meta(k); m.waitSite.Load() == nil {
					// 2: acquireDeadline and its caller.
					rec := make([]uintptr, siteWords(2))
					rec = rec[:fpstack.Record(2, rec)]
					m.waitSite.CompareAndSwap(nil, &rec)
				}
				if engine != nil {
					engine.Parked()
				}
			}
		}
		if Mode() != ModeOff {
			if cycle := checkCycle(w); cycle != nil {
				// Out of the queue before the report is made: a reporter
				// that panics or exits its goroutine must not leave this
				// waiter queued, or the lock would never wake anyone again.
				leave(nil)
				return deadlock(cycle)
			}
		}
		if !deadline.IsZero() && time.Until(deadline) <= 0 {
			return leave(context.DeadlineExceeded)
		}
		if sema {
			// The callbacks are registered after the waiter is queued: one
			// whose context is already done runs at once and finds it.
			if ctx != nil && stop == nil {
				stop = context.AfterFunc(ctx, func() { l.cancel(w, ctx.Err()) })
			}
			if !deadline.IsZero() && dstop == nil {
				dstop = time.AfterFunc(time.Until(deadline), func() { l.cancel(w, context.DeadlineExceeded) }).Stop
			}
			w.sem.Lock()
			if w.cancelled != nil {
				finish() // dequeued by l.cancel: no wakeup to pass on
				return w.cancelled
			}
		} else {
			if !deadline.IsZero() && expired == nil {
				expired = dt.arm(deadline)
			}
			select {
			case <-w.ch:
			case <-done:
				return leave(ctx.Err())
			case <-expired:
				return leave(context.DeadlineExceeded)
			}
		}
		if w.handoff {
			return acquired()
		}
		// While woken is set no Release wakes anyone else, so the lock is
		// this waiter's to take once it is free. If it is held again (the
		// releaser barged back in), spin before queueing again, as
		// sync.Mutex's woken waiter does, rather than park at once and
		// cost the releaser another wakeup at its next Unlock (see spin
		// for the figures).
		clear = flagWoken
		if l.tryAcquire(g, flagWoken) || spin(l, g, flagWoken) {
			return acquired()
		}
		if nanotime()-w.start > starvationThreshold {
			set = flagStarving
		}
	}
}

// A deadlineTimer is the timer of a wait with a deadline that parks on a
// channel. It is made at the first park and shared by the waits of one
// call, so that RWLock.LockDeadline, which may park for the writer lock
// and then for the readers to leave, makes one timer, not one per wait.
type deadlineTimer struct{ t *time.Timer }

// arm returns the channel that fires at deadline, making the timer or
// restarting the stopped one.
func (d *deadlineTimer) arm(deadline time.Time) <-chan time.Time {
	if d.t == nil {
		d.t = time.NewTimer(time.Until(deadline))
		return d.t.C
	}
	// A tick sent before the Stop is left in the channel only under
	// GODEBUG asynctimerchan=1 (a main module older than Go 1.23); it
	// must not end the next wait early.
	select {
	case <-d.t.C:
	default:
	}
	d.t.Reset(time.Until(deadline))
	return d.t.C
}

// stop stops the timer, if it was made.
func (d *deadlineTimer) stop() {
	if d.t != nil {
		d.t.Stop()
	}
}

// queueOrAcquire, under mu, either takes the free lock or marks the queue
// waiting (and, with set, starving), in one CompareAndSwap, clearing the
// flags in clear either way. When it queues, it decides how w parks this
// time: durably (a waiter in a bubble whose wakers are all in its bubble,
// see durableOK), on sem (any other waiter in a bubble), or on its own
// channel (a goroutine outside bubbles).
func (l *Lock) queueOrAcquire(w *waiter, clear, set int64) bool {
	var d Domain
	for {
		s := l.state.Load()
		if s>>ownerShift == 0 && (s&flagDurable == 0 || l.mayTake(&d)) {
			if l.state.CompareAndSwap(s, s&^clear|w.g<<ownerShift) {
				return true
			}
			continue
		}
		n := s&^clear | flagWaiting | set
		durable := w.dom.Bubble() && l.durableOK(w, s)
		if durable && s&flagDurable == 0 {
			l.durDom.Store(uint64(w.dom)) // before the flag that publishes it
			n |= flagDurable
		}
		if l.state.CompareAndSwap(s, n) {
			w.setPark(durable)
			if durable {
				l.ndurable++
				w.durHolder, w.durState = s>>ownerShift, s
				w.durHolderDom, _ = cachedDomain(w.durHolder)
			}
			return false
		}
	}
}

// mayTake reports whether the calling goroutine may take the lock while
// durable waiters are queued: only a goroutine of their bubble may. *d
// caches the caller's domain across calls. The caller holds mu, so that
// the answer still holds at its CompareAndSwap (see tryAcquireDurable).
func (l *Lock) mayTake(d *Domain) bool {
	if *d == 0 {
		*d = CurDomain()
	}
	dur := Domain(l.durDom.Load())
	if testHookMayTake != nil {
		testHookMayTake(l)
	}
	return dur == *d
}

// testHookWake, if set (by tests), runs in releaseSlow between the
// CompareAndSwap that sets woken and wakeOne.
var testHookWake func(*Lock)

// testHookCancelled, if set (by tests), runs in cancelQueued once the
// waiter is dequeued, before its semaphore wakes it.
var testHookCancelled func(*waiter)

// testHookAbandon, if set (by tests), runs in abandon before it takes mu.
var testHookAbandon func(*Lock)

// testHookMayTake, if set (by tests), runs in mayTake between the load of
// durDom and the caller's CompareAndSwap.
var testHookMayTake func(*Lock)

// durableOK, under mu, reports whether w, in a bubble, may park durably in
// state s, in which the lock is held or durable waiters of another bubble
// are queued: the holder, every queued waiter and the woken waiter in
// flight must be of w's bubble. While woken is set, wokenDom is the
// woken waiter's domain, or, until the releaser that set woken has
// dequeued a waiter, the releaser's: the waiter it dequeues may be w (the
// waiter it meant to wake may have left the queue in between, and a
// goroutine of w's bubble taken the free lock). (wokenDom may name
// a waiter that has since taken the lock or queued again; then it is
// checked as holder or queued waiter too, and a stale answer only makes w
// park on sem.) A holder that
// took the lock on the fast path is looked up in the domain cache, or in a
// dump of all goroutines: only waiters in bubbles ever pay for that.
func (l *Lock) durableOK(w *waiter, s int64) bool {
	if s&flagDurable != 0 && Domain(l.durDom.Load()) != w.dom {
		return false
	}
	if s&flagWoken != 0 && Domain(l.wokenDom.Load()) != w.dom {
		return false
	}
	for q := l.q.head; q != nil; q = q.next {
		if q.dom != w.dom {
			return false
		}
	}
	return holderIn(s>>ownerShift, w.dom)
}

// holderIn reports whether goroutine o, a lock's holder (0: none), is of
// domain d. It may cost a dump of all goroutines (see domainOf): only
// goroutines about to park in a bubble ask.
func holderIn(o int64, d Domain) bool { return o == 0 || domainOf(o) == d }

// cancel is the context or deadline callback of a waiter parked on sem:
// if the waiter is still queued it dequeues it and posts the token marked
// cancelled with err. A waiter that is not queued was dequeued by a
// wakeup, which owns its token, or is between parks, and checks its
// context and deadline before it parks again.
func (l *Lock) cancel(w *waiter, err error) { w.cancelQueued(&l.mu, l.remove, err) }

// cancelQueued is cancel for a waiter queued under mu (a Lock's or an
// RWLock's reader queue); remove unlinks it, under mu.
//
// The waiter is unregistered here, before it is dequeued, as a waiter that
// gives up by itself unregisters before it abandons (see acquireDeadline):
// once dequeued it has given up, but it runs again only later, and until
// its own unregister a goroutine parking on a lock it holds would find a
// cycle through it that is no longer real.
func (w *waiter) cancelQueued(mu *sync.Mutex, remove func(*waiter), err error) {
	mu.Lock()
	if !w.inq || !w.sema {
		mu.Unlock()
		return
	}
	unregister(w)
	remove(w)
	w.cancelled = err
	mu.Unlock()
	if testHookCancelled != nil {
		testHookCancelled(w)
	}
	w.sem.Unlock()
}

// checkWaker panics if the calling goroutine is about to wake a durable
// waiter of another domain, which the Go runtime would answer with a fatal
// error. The rules on parking make it impossible; a panic (which can be
// recovered, and names the cause) is the better failure should they not.
func (w *waiter) checkWaker() {
	if msg, bad := w.foreignWaker(); bad {
		panic(msg)
	}
}

// foreignWaker reports whether w is a durable waiter of a domain other
// than the calling goroutine's, and if so returns a message naming both
// sides, what w parked behind and the lock's state.
func (w *waiter) foreignWaker() (msg string, bad bool) {
	if !w.durable {
		return "", false
	}
	d := CurDomain()
	if d == w.dom {
		return "", false
	}
	g := gid.Get()
	l := w.lock
	woken := Domain(l.wokenDom.Load())
	dump := allStacks()
	return fmt.Sprintf("locksmith: wakeup of goroutine %d, durably blocked in synctest %s, by goroutine %d in %s, "+
		"which the Go runtime does not allow: the waiter stays blocked and the lock goes on without it "+
		"(usually goroutine %d held the lock while it ran synctest.Test, and the bubble deadlocked on it; "+
		"the waiter parked behind holder %d, cached as %s, in state %#x; the lock: state %#x, durable domain %s, woken domain %s; "+
		"the goroutines' headers now: %q, %q, %q)",
		w.g, w.dom, g, d, w.durHolder, w.durHolder, w.durHolderDom, w.durState,
		l.state.Load(), Domain(l.durDom.Load()), woken,
		headerOf(dump, w.g), headerOf(dump, g), headerOf(dump, w.durHolder)), true
}

// spin makes a few bounded attempts to take the lock for g before it
// parks, clearing the flags in clear when it does (flagWoken for a woken
// waiter). It spins as sync.Mutex does, with the runtime's own primitives
// (spin.go): while the lock is held and the runtime says spinning makes
// sense (more than one CPU, no idle processor, nothing else queued on
// this one), it waits a round of 30 PAUSE instructions, then looks again
// and tries to take the lock if it is free; it gives up after spinRounds
// rounds.
//
// A round is long (1.5-2 µs on the AMD EPYC virtual machine, whose PAUSE
// is slow), so a waiter lets the holder run on alone, taking and
// releasing the lock many times, instead of taking every release from
// it; each hand-off between goroutines costs the next holder the cache
// lines of the lock and of the data it guards. Rejected alternatives,
// with two goroutines on 2 cores taking turns at a ~100 ns critical
// section and ~25 ns between (both running: the process run SCHED_FIFO,
// so that other processes could not take a core from it; three runs of
// 40 rounds of 20,000 operations against sync.Mutex, medians):
// polling the state word 30 times a round, 4 rounds, 0.81-0.84x
// sync.Mutex's throughput at 1.13-1.17x its CPU per operation (hand-offs
// on almost every operation, and a park every ~80 operations); sync's 4
// rounds, 0.86-0.90x at 1.07-1.15x; 8 rounds, and a woken waiter
// spinning again before it queues again (acquireDeadline), as here,
// 0.92-0.98x at 1.06-1.10x, with a third of the parks of the polling. A park here costs
// more than sync.Mutex's (a waiter and its channel, and the registration
// that deadlock detection walks), which is why this spins twice as many
// rounds; a waiter for a lock held long spends that much more CPU before
// it parks.
func spin(l *Lock, g int64, clear int64) bool {
	for i := 0; i < spinRounds; i++ {
		if l.state.Load()>>ownerShift != 0 {
			if !runtime_canSpin(0) {
				return false
			}
			runtime_doSpin()
		}
		if l.state.Load()&flagStarving != 0 {
			return false
		}
		if l.tryAcquire(g, clear) {
			return true
		}
	}
	return false
}

// spinRounds is how many rounds spin makes before it gives up.
const spinRounds = 8

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
		panic(&Error{Msg: msg, Sentinels: []error{ErrStranded}})
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

// abandon takes w out of the wait, for a cancelled or refused waiter. If a
// token was already on its way to w, w is the woken waiter and owes the
// lock a wakeup (passOn).
func (l *Lock) abandon(w *waiter) {
	if testHookAbandon != nil {
		testHookAbandon(l)
	}
	l.mu.Lock()
	if w.inq {
		l.remove(w)
		l.mu.Unlock()
		return
	}
	sema := w.sema
	l.mu.Unlock()
	w.awaitToken(sema) // posted by wakeOne, handOff or cancel right after it dequeued w
	if w.cancelled == nil {
		l.passOn(w)
	}
}

// passOn hands on the wakeup that w, dequeued by wakeOne or handOff and
// given its token, does not use: if the lock is free with others waiting,
// it wakes the next one in its place (keeping woken set); otherwise it
// clears woken, and the holder's Release will wake. This is
// x/sync/semaphore's rule: a grant that arrives after cancellation is
// handed on, never dropped.
func (l *Lock) passOn(w *waiter) {
	if w.handoff {
		// Handed the lock after deciding to leave: pass it on. The writer
		// lock of an RWLock is released as its Unlock does, so that the
		// readers that queued behind w as the writer are woken too.
		if rw := RWOf(l, w.class); rw != nil {
			rw.Unlock(w.g)
			return
		}
		l.releaseSlow(w.g)
		return
	}
	for {
		s := l.state.Load()
		if s>>ownerShift == 0 && s&flagWaiting != 0 {
			strand(l.wakeOne())
			return
		}
		if l.state.CompareAndSwap(s, s&^flagWoken) {
			return
		}
	}
}

func (l *Lock) enqueue(w *waiter, front bool) {
	w.inq = true
	if front {
		l.q.pushFront(w)
	} else {
		l.q.pushBack(w)
	}
}

// remove unlinks a queued waiter and drops the counts it added.
func (l *Lock) remove(w *waiter) {
	l.q.unlink(w)
	w.inq = false
	if w.durable {
		if l.ndurable--; l.ndurable == 0 {
			l.clearFlags(flagDurable)
		}
	}
	if l.q.head == nil {
		l.clearFlags(flagWaiting)
	}
}

// Starving reports whether the lock is in starvation mode (for tests).
func (l *Lock) Starving() bool { return l.state.Load()&flagStarving != 0 }

// QueueLen returns the number of parked waiters (for tests and Dump).
func (l *Lock) QueueLen() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for w := l.q.head; w != nil; w = w.next {
		n++
	}
	return n
}

// waitList is a FIFO of queued waiters, linked through their prev and
// next fields: a Lock's waiters, and an RWLock's queued readers. Its
// owner guards it and keeps its own counts.
type waitList struct {
	head, tail *waiter
}

func (q *waitList) pushBack(w *waiter) {
	w.prev, w.next = q.tail, nil
	if q.tail == nil {
		q.head = w
	} else {
		q.tail.next = w
	}
	q.tail = w
}

func (q *waitList) pushFront(w *waiter) {
	w.prev, w.next = nil, q.head
	if q.head == nil {
		q.tail = w
	} else {
		q.head.prev = w
	}
	q.head = w
}

func (q *waitList) unlink(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		q.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		q.tail = w.prev
	}
	w.prev, w.next = nil, nil
}
