package condvar

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/locksmith-go/locksmith/internal/compat"
	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/gid"
	"github.com/locksmith-go/locksmith/internal/rt"
	"github.com/locksmith-go/locksmith/misuse"
)

// ErrNotOwner is matched (with errors.Is) by the panic value of every wait
// (Wait, WaitTimeout, WaitContext, WaitWhile, WaitUntil and the deadline
// waits) called without holding the Cond's owner-aware lock. It is the
// same value as mutex.ErrNotOwner and monitor.ErrNotOwner.
var ErrNotOwner = misuse.ErrNotOwner

// ErrNilLocker is matched by the panic value of New(nil), and of a wait or
// Locker call that finds a Cond's L nil and the Cond not yet bound.
var ErrNilLocker = errors.New("nil Locker")

// ErrCopied is matched by the panic value of any method of a Cond copied
// after its first use.
var ErrCopied = errors.New("Cond copied after first use")

// ErrLockerChanged is matched by the panic value of a wait or Locker call
// on a Cond whose L was changed after its first wait or Locker call.
//
//lint:ignore ST1005 the message starts with the type name Cond, as ErrCopied's does
var ErrLockerChanged = errors.New("Cond's L changed after first use")

// ErrNilContext is matched by the panic value of WaitContext,
// WaitUntilContext and WaitWhileContext called with a nil context. It is
// the same value as mutex.ErrNilContext and monitor.ErrNilContext.
var ErrNilContext = misuse.ErrNilContext

// ErrReadLocker is matched (with errors.Is) by the panic value of a wait on
// a Cond bound to the RLocker of a mutex.RWMutex or monitor.RWMonitor, made
// by the goroutine that holds the lock for writing. Such a wait would
// release the read holds only (an RWMutex's writer has none) and keep the
// write lock, so no goroutine could take the lock to change the condition;
// wait on a Cond of the write lock (New(rw)) instead. A Cond of an RLocker
// is otherwise valid: its waits release and retake the caller's read lock.
var ErrReadLocker = misuse.ErrReadLocker

// Cond is a condition variable: a rendezvous point for goroutines waiting
// for, or announcing, a change to state guarded by its lock L.
//
// A Cond is made by New, or as a struct whose L is set before first use,
// as with sync.Cond: &condvar.Cond{L: l} behaves as condvar.New(l), and so
// does a zero Cond whose L is set before its first use (as x/net's http2
// pipe sets a sync.Cond's L on first use). The first wait (or Locker call)
// binds the Cond to the L it finds; a later change of L is a run-time
// error: the next wait or Locker call panics with ErrLockerChanged, and the
// Cond stays bound to the first lock. Signal, Broadcast and Waiters do not
// read L, as sync.Cond's Signal and Broadcast do not: before the first
// wait there is nobody to wake, and they do nothing. A Cond must not be
// copied after first use (go vet reports copies; a copied Cond panics with
// ErrCopied when used).
//
// In the terminology of the Go memory model, a call to Signal or Broadcast
// “synchronizes before” any Wait call that it unblocks returns.
//
// Inside a testing/synctest bubble, a waiter is durably blocked while the
// Cond has been made (by New), waited on and signalled only by goroutines
// of its bubble; once another domain (the outside, another bubble) has
// used it, or if New ran outside any bubble, its waiters in bubbles park in
// a way any goroutine may end, which is not durable. A signal from outside
// the bubble to a waiter that was already durably blocked cannot wake it
// (Go would kill the program): it is kept for the waiter, which wakes at
// the next Wait, WaitTimeout, WaitContext, Signal or Broadcast by a
// goroutine of its bubble (also a wait that returns at once), or when a
// timeout of a wait of that bubble fires. See docs/synctest.md.
//
// A Wait without a time limit allocates nothing (if it queues, once the
// Cond has served as many concurrent queued waiters before); WaitTimeout
// and WaitContext allocate their timer or context callback. A Cond holds
// no timer and no queue entry for a waiter that has returned. (A timeout
// or cancellation that fires just as a Signal wins runs its callback in a
// goroutine of its own, which may still be finishing as the wait returns;
// it only finds the wait decided and exits.)
type Cond struct {
	_ noCopy

	// L is held while observing or changing the condition, and by every
	// Wait. Set it before first use, or use New.
	L sync.Locker

	b atomic.Pointer[binding] // set once, by the first wait or Locker call

	// A wait parks in one of two ways. An untimed wait outside bubbles,
	// made while no waiter is queued, takes a ticket on nl, the runtime's
	// notify list that sync.Cond uses, and parks there: no record, no
	// lock taken (see Wait). Every other wait (WaitTimeout, WaitContext,
	// a wait in a bubble, or one that finds a waiter queued) queues a
	// waiter record and parks on it (see waiter). Signal wakes whichever
	// waited first: tickets are taken only while nobody is queued, so a
	// ticket not yet notified is older than every queued waiter, except
	// for one taken as a waiter queued, which tk tells apart.
	//
	// The queue, the free list and the ticket bookkeeping are guarded by
	// mu, the Cond's own mutex, also for an owner-aware L: Signal and
	// Broadcast may be called without holding L, so L cannot guard them.
	// Signal and Broadcast always take mu; a ticket waiter takes it only
	// in the rare cases keepTicketOrMove and abandonTicket handle.
	//
	// Rejected alternatives:
	//   - Guarding the queue by L when the caller holds an owner-aware L,
	//     and by mu only when it does not: the two guards do not exclude
	//     each other, so a Signal without L could unlink a waiter while a
	//     Wait holding L pushes one. Making them exclude each other needs
	//     an atomic read-modify-write on each side, which costs what taking
	//     mu costs.
	//   - Taking L inside a Signal made without it: sync.Cond's Signal
	//     never blocks on L, and code relies on that (a goroutine may
	//     Signal while another holds L and waits for it).
	//   - Taking each ticket under mu, with counts of tickets taken and
	//     notified kept beside the runtime's: simpler (no keepTicketOrMove),
	//     but BenchmarkCondPingPongRatio measures more of sync.Cond's CPU
	//     time with mu in Wait than without (interleave the two builds:
	//     `go test -run '^$' -bench PingPongRatio ./condvar`).
	//   - Signal without mu, claiming the ticket to notify with a
	//     CompareAndSwap: with mu left out of Signal altogether (the most
	//     it could save, and unsafe), the ratio fell by 0.01-0.08 (two
	//     sets of 3-4 interleaved runs), while every decision that relies
	//     on nl.Notify changing only under mu (which ticket a Signal
	//     notifies, whether an abandoned ticket was notified, the ticket
	//     range of the last Broadcast) would need the claim word instead,
	//     and Broadcast a notification per ticket.
	mu   sync.Mutex
	head *waiter
	tail *waiter
	free *waiter // waiters to reuse, linked by next

	// The ticket list (see waitTicket). Tickets are taken without mu;
	// notifications (Signal, Broadcast) are sent only under mu, so that
	// nl.Notify, the next ticket to notify, changes only under mu, and
	// the tickets in [nl.Notify, nl.Wait) are those not yet notified.
	// skip lists those of them whose wait was abandoned (its release of
	// the lock panicked, or it queued instead: see keepTicketOrMove),
	// which a Signal passes over. An abandoned ticket that becomes the oldest
	// not yet notified is notified at once (see dropSkipped), so skip
	// holds only tickets behind one that a goroutine waits on. bhi is
	// nl.Notify just after the last Broadcast, so the tickets before it
	// were notified by that Broadcast or earlier. movers are the waits
	// that gave up their ticket and have not yet queued (see
	// keepTicketOrMove): Signal and Broadcast choose them as they would
	// have chosen the ticket, by setting their pre.
	nl     rt.NotifyList
	watch  core.CondSlots // the registered ticket waits (see condwait.go)
	skip   []uint32       // guarded by mu
	bhi    uint32         // guarded by mu
	movers []*waiter      // guarded by mu

	// tick is what a ticket waiter checks, with one load before and one
	// after it takes its ticket: bit 0 (tickQueued) is set while the
	// queue is not empty, and the rest counts Broadcasts, twice each
	// (tickBroadcast is set while one is under way). Written under mu.
	tick compat.Uint64

	//lint:ignore U1000 used only under the race detector (race.go)
	raceSeq atomic.Uint64 // used only under the race detector: see race.go

	// dom records the domains (testing/synctest bubbles, or outside any)
	// of the goroutine that made c with New, of the goroutines that have
	// waited on c, and of those that have signalled it while it had seen
	// one bubble only: 0 for none yet, a single domain, or core.DomMixed
	// for good. See parkDurably.
	dom atomic.Uint64

	// pend lists waits decided by a goroutine that could not wake them
	// (see decidePending), linked by pnext; npend counts them, for a cheap
	// look.
	pmu   sync.Mutex
	pend  *waiter
	npend atomic.Int32
}

// binding is what a Cond's first use learns about its L. It never changes
// afterwards; self is the Cond it was made for, so a copy (which copies
// the pointer) is told apart.
type binding struct {
	self *Cond
	l    sync.Locker
	cl   core.CondLocker // nil when l cannot tell its owner
	// For the detector (see beginWait): the lock and class l is, when it
	// is a locksmith lock, and l's type.
	lk      *core.Lock
	lkClass *core.Class
	typ     string
	tag     atomic.Pointer[core.CondTag] // made by the first registered wait
	slots   atomic.Bool                  // set once the Cond's watch slots are read (see newTag)
}

// New returns a Cond bound to l, as &Cond{L: l} is.
//
// If l is a *mutex.Mutex, a *monitor.Monitor, a *mutex.RWMutex, a
// *monitor.RWMonitor, the RLocker of one of the last two, or any
// sync.Locker with an `Owned() bool` method, the Cond is owner-aware: the
// waits panic with ErrNotOwner unless the caller holds l. For a read-write
// lock that is its write lock: a wait releases every write and read hold
// of the caller and restores both counts. For its RLocker it is a read
// lock: a wait releases every read hold of the caller and restores the
// count, and panics with an error matching ErrReadLocker if the caller is
// the writer. Otherwise Wait requires l held as sync.Cond's does (l.Unlock
// decides what happens if not). Either way,
// Signal and Broadcast may be called with or without l held, as with
// sync.Cond. New(nil) panics with an error matching ErrNilLocker.
func New(l sync.Locker) *Cond {
	if l == nil {
		panic(core.Misuse("condvar: New with a nil Locker", ErrNilLocker))
	}
	c := &Cond{L: l}
	c.b.Store(c.newBinding(l))
	c.dom.Store(uint64(core.CurDomain()))
	return c
}

func (c *Cond) newBinding(l sync.Locker) *binding {
	b := &binding{self: c, l: l, typ: fmt.Sprintf("%T", l)}
	if a, ok := core.Adapt(l); ok {
		b.cl, b.lk, b.lkClass = a.Cond, a.Lock, a.Class
	} else if o, ok := l.(interface{ Owned() bool }); ok {
		b.cl = ownerLocker{l, o}
	}
	return b
}

// ownerLocker adapts a user's owner-aware sync.Locker.
type ownerLocker struct {
	sync.Locker
	o interface{ Owned() bool }
}

func (u ownerLocker) Owned() bool     { return u.o.Owned() }
func (u ownerLocker) ReleaseAll() int { u.Unlock(); return 1 }
func (u ownerLocker) Restore(int)     { u.Lock() }

// Locker returns the lock c is bound to.
func (c *Cond) Locker() sync.Locker { return c.bind().l }

// bind returns c's binding, binding c to L on first use, and checks that c
// is not a copy and that L has not changed. It is one atomic load and two
// comparisons once bound. Binding is race-free: concurrent first uses
// build a binding each, and one CompareAndSwap picks the one all use.
func (c *Cond) bind() *binding {
	b := c.b.Load()
	if b == nil {
		b = c.bindSlow()
	}
	if b.self != c {
		panic(core.Misuse("condvar: Cond copied after first use", ErrCopied))
	}
	if !sameLocker(c.L, b.l) {
		panic(core.Misuse(fmt.Sprintf("condvar: L changed after first use (bound to %T, L is now %T)", b.l, c.L), ErrLockerChanged))
	}
	return b
}

// used reports whether c has been bound (by a wait or Locker), checking
// that it is not a copy. Signal, Broadcast and Waiters use it instead of
// bind: they do not need L, and before the first wait there is nothing to
// wake or count. Not reading L keeps them free of races with code that
// sets L lazily under the lock, as sync.Cond's Signal is.
func (c *Cond) used() bool {
	b := c.b.Load()
	if b == nil {
		return false
	}
	if b.self != c {
		panic(core.Misuse("condvar: Cond copied after first use", ErrCopied))
	}
	return true
}

func (c *Cond) bindSlow() *binding {
	l := c.L
	if l == nil {
		panic(core.Misuse("condvar: Cond used with a nil L (set L before first use, or use New)", ErrNilLocker))
	}
	c.b.CompareAndSwap(nil, c.newBinding(l)) // a failure means another first use won
	return c.b.Load()
}

// sameLocker reports whether a and b are the same interface value, word
// for word: the same dynamic type and the same pointer (for a pointer,
// the usual case, that is the same lock). An interface comparison would
// do the same for pointers, but panics for a Locker of a non-comparable
// type.
func sameLocker(a, b sync.Locker) bool {
	type words struct{ typ, data unsafe.Pointer }
	return *(*words)(unsafe.Pointer(&a)) == *(*words)(unsafe.Pointer(&b))
}

func (c *Cond) checkOwner(op string) *binding {
	b := c.b.Load()
	if b == nil || b.self != c || !sameLocker(c.L, b.l) {
		b = c.bind() // binds c, or panics
	}
	if b.cl != nil && !b.cl.Owned() {
		notOwner(op)
	}
	return b
}

func notOwner(op string) {
	panic(core.Misuse(fmt.Sprintf("condvar: %s without holding the lock (goroutine %d)", op, gid.Get()), ErrNotOwner))
}

// Wait atomically unlocks c's lock and suspends the calling goroutine until
// it is woken by Signal or Broadcast, then locks the lock again before
// returning. If the lock is a monitor.Monitor, Wait releases every hold and
// restores the same hold count; if it is the RLocker of a
// monitor.RWMonitor, every read hold.
//
// As with sync.Cond, the caller should wait in a loop on its condition
// (or use WaitWhile or WaitUntil).
//
// If retaking the lock panics (with deadlock detection on, a retake that
// would close a deadlock cycle panics with a *detect.DeadlockError; in
// Order mode a LockOrder reporter may panic or exit the goroutine), Wait
// does not return and the caller holds nothing of the lock: no hold of a
// Monitor, whatever the count before. The holds it lost are remembered for
// the Unlocks the caller has deferred (one per hold, for a mutex.Mutex or
// monitor.Monitor): each panics with an error that matches ErrNotOwner and
// the retake's panic value, so that in
//
//	mu.Lock()
//	defer mu.Unlock()
//	for !ready {
//		c.Wait()
//	}
//
// recover() sees an error matching detect.ErrDeadlock (errors.As finds the
// *detect.DeadlockError), not a bare misuse, and a retry loop keyed on it
// works. If the goroutine is exiting by runtime.Goexit, those Unlocks
// return quietly instead. A Signal that had chosen this waiter is passed
// on to the next one, unless a Broadcast has woken every waiter since.
func (c *Cond) Wait() {
	// The common case, an untimed wait outside bubbles on a Cond used only
	// there, with nobody queued, is wait and waitTicket with checkOwner,
	// release and restore written out here: each call level left out of
	// a Wait or Signal lowers BenchmarkCondPingPongRatio's ratio to
	// sync.Cond's CPU time, on every lock kind (interleave the builds:
	// `go test -run '^$' -bench PingPongRatio ./condvar`).
	b := c.b.Load()
	if b == nil || b.self != c || !sameLocker(c.L, b.l) {
		b = c.bind() // binds c, or panics
	}
	cl := b.cl
	if cl != nil && !cl.Owned() {
		notOwner("wait")
	}
	dom := core.CurDomain()
	if ticketPath && dom == core.DomOutside && c.dom.Load() == uint64(dom) && c.npend.Load() == 0 {
		if s := c.tick.Load(); s&(tickQueued|tickBroadcast) == 0 && ticketHook == nil {
			t := rt.NotifyListAdd(&c.nl)
			if c.tick.Load() != s {
				c.afterTicket(b, dom, t, s)
				return
			}
			phase := ticketReleasing
			reg := c.beginTicket(b, t)
			defer func() {
				if phase != ticketDone {
					if phase == ticketReleasing {
						c.dropTicket(reg, t)
					}
					c.ticketFailed(phase, t, s, true)
				}
			}()
			holds := 1
			if cl != nil {
				holds = cl.ReleaseAll()
			} else {
				b.l.Unlock()
			}
			phase = ticketRetaking
			rt.NotifyListWait(&c.nl, t)
			endTicket(reg)
			c.raceAcquire()
			if cl != nil {
				cl.Restore(holds)
			} else {
				b.l.Lock()
			}
			phase = ticketDone
			return
		}
	}
	c.wait(b, 0, nil)
}

// WaitTimeout is Wait with a time limit. It reports whether it was woken by
// Signal or Broadcast (true) or returned because d elapsed (false). Either
// way the lock is held again, with its hold count restored, when it returns.
// A d <= 0 returns false at once without releasing the lock (delivering,
// in a testing/synctest bubble, what a wait does: see Cond).
func (c *Cond) WaitTimeout(d time.Duration) bool {
	b := c.checkOwner("wait")
	if d <= 0 {
		c.deliverAfter()
		return false
	}
	return c.wait(b, d, nil)
}

// WaitContext is Wait until ctx is done. It returns nil if woken by Signal
// or Broadcast, or ctx.Err() if ctx was done first; either way the lock is
// held again, with its hold count restored, when it returns. If ctx is
// already done, it returns ctx.Err() at once without releasing the lock
// (delivering, in a testing/synctest bubble, what a wait does: see Cond).
// A nil ctx panics with an error matching ErrNilContext.
func (c *Cond) WaitContext(ctx context.Context) error {
	b := c.checkOwner("wait")
	if ctx == nil {
		panic(core.Misuse("condvar: WaitContext with a nil context", ErrNilContext))
	}
	if err := ctx.Err(); err != nil {
		c.deliverAfter()
		return err
	}
	if c.wait(b, 0, ctx) {
		return nil
	}
	return ctx.Err()
}

// WaitWhile waits as long as cond returns true, calling it with the lock
// held (Ruby's ConditionVariable#wait_while).
func (c *Cond) WaitWhile(cond func() bool) {
	c.checkOwner("wait") // also when cond is false at once
	for cond() {
		c.Wait()
	}
}

// WaitUntil waits until pred returns true, calling it with the lock held
// (Ruby's wait_until).
func (c *Cond) WaitUntil(pred func() bool) {
	c.checkOwner("wait") // also when pred is true at once
	for !pred() {
		c.Wait()
	}
}

// wait queues the caller, releases the lock, parks until signalled, timed
// out (d > 0) or cancelled (ctx not nil), and retakes the lock. It reports
// whether it was signalled.
//
// Signal, a timeout and a cancellation each try to decide the wait with
// one CompareAndSwap (see waiter), so exactly one of them decides how it
// ends: a Signal never chooses a waiter that has already timed out (it
// goes to the next one), and a waiter that a Signal chose returns true even
// if its time is up by the time it runs. No signal is lost.
func (c *Cond) wait(b *binding, d time.Duration, ctx context.Context) bool {
	dom := core.CurDomain()
	durable := c.parkDurably(dom)
	if ticketPath && d == 0 && ctx == nil && dom == core.DomOutside {
		if s := c.tick.Load(); s&(tickQueued|tickBroadcast) == 0 {
			if ticketHook != nil {
				ticketHook(c, false)
			}
			t := rt.NotifyListAdd(&c.nl)
			if ticketHook != nil {
				ticketHook(c, true)
			}
			if c.tick.Load() == s {
				c.waitTicket(b, t, s, true)
			} else {
				c.afterTicket(b, dom, t, s)
			}
			return true
		}
	}
	return c.waitQueued(b, dom, durable, d, ctx, nil)
}

func (c *Cond) release(b *binding) int {
	if b.cl != nil {
		return b.cl.ReleaseAll()
	}
	b.l.Unlock()
	return 1
}

func (c *Cond) restore(b *binding, n int) {
	if b.cl != nil {
		b.cl.Restore(n)
		return
	}
	b.l.Lock()
}

// Signal wakes the goroutine that has waited longest, if any. As with
// sync.Cond, the caller may hold c's lock but need not: a waiter is
// queued before it releases the lock, so a Signal made after a change to
// the condition under the lock reaches every goroutine that waited
// without seeing the change. (monitor.Monitor's Notify, like Java's,
// requires the monitor held.)
func (c *Cond) Signal() {
	b := c.b.Load()
	if b == nil {
		return
	}
	if b.self != c {
		panic(core.Misuse("condvar: Cond copied after first use", ErrCopied))
	}
	if core.Domain(c.dom.Load()).Bubble() {
		c.touch()
	}
	c.raceRelease()
	c.mu.Lock()
	if atomic.LoadUint32(&c.nl.Wait) != c.notified() && c.head == nil && len(c.skip)+len(c.movers) == 0 {
		// The common case of signalLocked: a ticket waits, nobody queued.
		rt.NotifyListNotifyOne(&c.nl)
	} else {
		c.signalLocked() // cannot panic: no user code runs under mu
	}
	c.mu.Unlock()
	c.deliverAfter()
}

// Broadcast wakes all goroutines waiting on c. Like Signal, it may be
// called with or without c's lock held.
func (c *Cond) Broadcast() {
	if !c.used() {
		return
	}
	c.touch()
	c.raceRelease()
	c.mu.Lock()
	c.tick.Add(tickBroadcast)
	if atomic.LoadUint32(&c.nl.Wait) != c.notified() {
		c.skip = c.skip[:0]
		rt.NotifyListNotifyAll(&c.nl)
	}
	c.bhi = c.notified()
	for _, w := range c.movers {
		w.pre = stAll
	}
	clear(c.movers)
	c.movers = c.movers[:0]
	for w := c.head; w != nil; w = c.head {
		c.unlink(w)
		c.decide(w, w.expect, w.gen, stAll) // cannot panic: no user code runs under mu
	}
	c.tick.Add(tickBroadcast)
	c.mu.Unlock()
	c.deliverAfter()
}

// Waiters returns the number of goroutines waiting on c and not yet
// signalled (Java's getWaitQueueLength). A goroutine counts from the
// moment its wait registers, before it releases the lock (so a caller
// holding the lock counts every wait begun before it took the lock),
// without a break until a Signal or Broadcast chooses it, its timeout or
// cancellation fires, or its wait panics: a signalled, timed-out or
// cancelled goroutine that has not yet retaken the lock no longer counts.
// The count is exact at the moment of the call, with or without the lock
// held, but may be out of date by the time it is used: use it for
// monitoring and tests.
func (c *Cond) Waiters() int {
	if !c.used() {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// A wait is decided by the CompareAndSwap on st: a queued waiter
	// whose st is still what it was when it queued is waiting.
	n := int(atomic.LoadUint32(&c.nl.Wait)-c.notified()) - len(c.skip) + len(c.movers)
	for w := c.head; w != nil; w = w.next {
		if w.st.Load() == w.expect {
			n++
		}
	}
	return n
}

type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
