package condvar

import (
	"context"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/gid"
)

// ErrNotOwner is matched (with errors.Is) by the panic value of Wait,
// Signal and Broadcast called without holding the Cond's owner-aware lock.
// It is the same value as mutex.ErrNotOwner and monitor.ErrNotOwner.
var ErrNotOwner = core.ErrNotOwner

// Cond is a condition variable: a rendezvous point for goroutines waiting
// for, or announcing, a change to state guarded by its lock.
//
// A Cond must be created with New, and must not be copied after first use
// (go vet reports copies; a copied Cond panics when used).
//
// In the terminology of the Go memory model, a call to Signal or Broadcast
// “synchronizes before” any Wait call that it unblocks returns.
//
// A Wait without a time limit allocates nothing once the Cond has served
// as many concurrent waiters before; WaitTimeout and WaitContext allocate
// their timer or context callback. A Cond holds no timer and no queue
// entry for a waiter that has returned. (A timeout or cancellation that
// fires just as a Signal wins runs its callback in a goroutine of its own,
// which may still be finishing as the wait returns; it only finds the wait
// decided and exits.)
type Cond struct {
	_    noCopy
	self *Cond // New sets it; a copy or a zero Cond fails the check

	l  sync.Locker
	cl core.CondLocker // nil when l cannot tell its owner

	// The wait queue and the free list are guarded by the Cond's guard:
	// for an owner-aware lock, the lock itself, which every Wait, Signal
	// and Broadcast holds (checkOwner enforces it), so they take no other
	// lock; for a plain sync.Locker, which Signal may be called without,
	// mu.
	mu   sync.Mutex
	head *waiter
	tail *waiter
	free *waiter // waiters to reuse, linked by next

	// n counts waiters queued whose wait is not yet decided. It changes
	// with the decision (under the guard for a Signal, without it for a
	// timeout), and Waiters reads it without the guard.
	n atomic.Int64

	// For a plain sync.Locker, spare holds waiters to reuse without taking
	// mu: bit i of busy is set while spare[i] is in use, and the goroutine
	// that set it owns the slot (and creates its waiter on first use). A
	// ping-pong needs two (one side starts its next wait before the other
	// has returned from its last); with more than four concurrent waiters
	// the rest fall back to free. (An owner-aware Cond needs none: its free list is guarded by
	// the lock the waiter holds when it starts and ends a wait.)
	busy  atomic.Uint32
	spare [4]*waiter
}

// A wait's decision, in the low bits of waiter.st.
const (
	stWoken uint64 = 1 // by Signal or Broadcast
	stGone  uint64 = 2 // by its own timeout or cancellation
	stMask  uint64 = 3
	stShift        = 2 // st is gen<<stShift | decision
)

// waiter is one goroutine's wait. It parks on its own sync.Cond, so that
// Signal wakes exactly the waiter it chose, and that sync.Cond's Locker is
// the waiter itself: sync.Cond.Wait takes its ticket on the runtime's notify
// list, then calls w.Unlock, which queues the waiter and releases the
// user's lock, and then parks until the ticket is notified (at once if it
// already was). So the waiter is visible to Signal only once its ticket is
// taken, no wakeup can fall between queueing and parking, and no lock is
// held across the park or retaken after it.
//
// How a wait ends is decided by one CompareAndSwap on st, from the value it
// had when the wait was queued to this wait's generation and decision:
// Signal (and Broadcast) and the timeout or cancellation callback each try
// it, and exactly one wins. A Signal whose CAS fails skips that waiter
// and goes on to the next, so no signal is lost; a stale callback from an
// earlier use of the record fails it, because st only grows. The winner
// then notifies park: the waiter is woken exactly once per wait. A waiter
// that timed out unlinks itself from the queue once it holds the guard
// again (Java's AbstractQueuedSynchronizer does the same), so a timeout
// takes no lock.
//
// Rejected alternatives:
//   - A channel per waiter. A channel must be made per wait (one made inside
//     a testing/synctest bubble must not be used outside it, so it cannot be
//     pooled), which cost two allocations per Wait and made a ping-pong
//     through the Cond 2.7 times slower than through sync.Cond.
//   - A sync.Cond per waiter bound to Cond.mu, checking a flag in a loop:
//     correct, but each wait then took mu three times and retook it after
//     the park, 1.5-1.7 times sync.Cond's ping-pong.
//   - sync.WaitGroup as the parking primitive: Done from outside the
//     synctest bubble of the Add is a fatal error, which a timer or
//     context callback could trigger.
//
// sync.Cond.Wait is durably blocking inside a bubble, needs no allocation,
// and is safe to reuse across bubbles.
type waiter struct {
	c    *Cond
	slot int       // index in c.spare, or -1
	park sync.Cond // park.L is the waiter: see Lock and Unlock

	// Guarded by the Cond's guard.
	prev   *waiter
	next   *waiter
	inq    bool
	gen    uint64 // counts uses of the record
	expect uint64 // st when this wait was queued: the CAS's old value

	st atomic.Uint64 // gen<<stShift | decision of the last decided wait

	// Owned by the waiting goroutine; set before or inside park.Wait.
	d     time.Duration
	ctx   context.Context
	holds int
	stop  func() bool
}

// Lock is called by park.Wait after the waiter wakes; there is nothing to
// retake (the user's lock is retaken by wait).
func (w *waiter) Lock() {}

// Unlock is called by park.Wait once it holds its ticket and before it
// parks: it queues the waiter and releases the user's lock.
func (w *waiter) Unlock() { w.c.publish(w) }

// New returns a Cond bound to l.
//
// If l is a *mutex.Mutex, a *monitor.Monitor, or any sync.Locker with an
// `Owned() bool` method, the Cond is owner-aware: Wait, Signal and
// Broadcast panic with ErrNotOwner unless the caller holds l. Otherwise it
// behaves like sync.Cond: Wait requires l held (l.Unlock decides what
// happens if not), Signal and Broadcast may be called without it.
func New(l sync.Locker) *Cond {
	if l == nil {
		panic("condvar: New with a nil Locker")
	}
	c := &Cond{l: l}
	c.self = c
	if a, ok := core.Adapt(l); ok {
		c.cl = a.Cond
	} else if o, ok := l.(interface{ Owned() bool }); ok {
		c.cl = ownerLocker{l, o}
	}
	return c
}

// ownerLocker adapts a user's owner-aware sync.Locker.
type ownerLocker struct {
	sync.Locker
	o interface{ Owned() bool }
}

func (u ownerLocker) Owned() bool     { return u.o.Owned() }
func (u ownerLocker) ReleaseAll() int { u.Unlock(); return 1 }
func (u ownerLocker) Restore(int)     { u.Lock() }

// Locker returns the lock c was created with.
func (c *Cond) Locker() sync.Locker { c.check(); return c.l }

func (c *Cond) check() {
	if c.self != c {
		if c.self == nil {
			panic("condvar: Cond used without New")
		}
		panic("condvar: Cond copied after first use")
	}
}

func (c *Cond) checkOwner(op string) {
	c.check()
	if c.cl != nil && !c.cl.Owned() {
		panic(core.Misuse(fmt.Sprintf("condvar: %s without holding the lock (goroutine %d)", op, gid.Get()), ErrNotOwner))
	}
}

// Wait atomically unlocks c's lock and suspends the calling goroutine until
// it is woken by Signal or Broadcast, then locks the lock again before
// returning. If the lock is a monitor.Monitor, Wait releases every hold and
// restores the same hold count.
//
// As with sync.Cond, the caller should wait in a loop on its condition
// (or use WaitWhile or WaitUntil).
//
// With deadlock detection on, if retaking the lock would close a deadlock
// cycle, Wait panics with a *detect.DeadlockError and does not hold the
// lock.
func (c *Cond) Wait() {
	c.checkOwner("wait")
	c.wait(0, nil)
}

// WaitTimeout is Wait with a time limit. It reports whether it was woken by
// Signal or Broadcast (true) or returned because d elapsed (false). Either
// way the lock is held again, with its hold count restored, when it returns.
// A d <= 0 returns false at once without releasing the lock.
func (c *Cond) WaitTimeout(d time.Duration) bool {
	c.checkOwner("wait")
	if d <= 0 {
		return false
	}
	return c.wait(d, nil)
}

// WaitContext is Wait until ctx is done. It returns nil if woken by Signal
// or Broadcast, or ctx.Err() if ctx was done first; either way the lock is
// held again, with its hold count restored, when it returns. If ctx is
// already done, it returns ctx.Err() at once without releasing the lock.
func (c *Cond) WaitContext(ctx context.Context) error {
	c.checkOwner("wait")
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.wait(0, ctx) {
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
func (c *Cond) wait(d time.Duration, ctx context.Context) bool {
	w := c.getWaiter()
	w.d, w.ctx = d, ctx
	// Takes a ticket, calls w.Unlock (publish) and parks until the one
	// notification for this wait.
	w.park.Wait()
	woken := w.st.Load()&stMask == stWoken
	holds, stop := w.holds, w.stop
	w.ctx, w.stop = nil, nil
	if stop != nil {
		stop()
	}
	if c.cl != nil {
		// If restore panics (deadlock detection refused the retake), a
		// timed-out record stays queued, decided, until the next Signal or
		// Broadcast skips and unlinks it; it is never reused.
		c.restore(holds)
		c.retire(w) // the guard is held again
		return woken
	}
	if !woken {
		c.mu.Lock()
		if w.inq {
			c.unlink(w)
		}
		c.mu.Unlock()
	}
	c.putSpare(w)
	c.restore(holds)
	return woken
}

// publish queues w and releases the user's lock; it runs inside
// w.park.Wait, after the ticket is taken and before the park. A Signal
// after the release finds the waiter queued.
func (c *Cond) publish(w *waiter) {
	if c.cl == nil {
		c.mu.Lock()
	}
	w.gen++
	w.expect = w.st.Load()
	c.push(w)
	c.n.Add(1)
	if c.cl == nil {
		c.mu.Unlock()
	}
	expect, gen := w.expect, w.gen
	released := false
	defer func() {
		if !released {
			c.abandon(w, expect, gen)
		}
	}()
	// The callback is registered before the lock is released: the ticket
	// is already taken, so one that fires at once only ends the wait as
	// soon as it starts, and a panic from a user's context (in its Done
	// method) is covered by the defer above, with the lock still held.
	switch {
	case w.d > 0:
		w.stop = time.AfterFunc(w.d, func() { c.expire(w, expect, gen) }).Stop
	case w.ctx != nil:
		w.stop = context.AfterFunc(w.ctx, func() { c.expire(w, expect, gen) })
	}
	w.holds = c.release()
	released = true
}

// abandon ends a wait whose set-up panicked after the waiter was queued:
// the lock's Unlock (a user's Locker may panic, before or after releasing
// the lock) or the context's Done. The panic leaves Wait, so the wait is
// decided as gone, or, if a Signal has already chosen this waiter (possible
// once the lock was released), the signal is passed to the next waiter, so
// that it is not lost with this one.
func (c *Cond) abandon(w *waiter, expect, gen uint64) {
	if w.stop != nil {
		w.stop()
	}
	w.ctx, w.stop = nil, nil
	passOn := !c.decide(w, expect, gen, stGone)
	switch {
	case c.cl == nil:
		c.mu.Lock()
		if passOn {
			c.signalQueued()
		}
		if w.inq {
			c.unlink(w)
		}
		c.mu.Unlock()
		c.putSpare(w)
	case c.cl.Owned():
		// The lock was not released: it guards the queue.
		if passOn {
			c.signalQueued()
		}
		c.retire(w)
	case passOn:
		// The lock was released, then its Unlock panicked, and a Signal
		// chose this waiter meanwhile: take the lock to pass the signal
		// on (its Unlock may panic again; the signal is passed by then).
		c.l.Lock()
		defer c.l.Unlock()
		c.signalQueued()
		c.retire(w)
	default:
		// Released, decided here, but the queue cannot be touched without
		// the lock: the record stays queued until a Signal or Broadcast
		// skips and unlinks it, and is not reused.
	}
}

// retire takes w out of the queue if it is still there (its wait timed
// out or was cancelled and no Signal has skipped it yet) and puts it on the
// free list of an owner-aware Cond. The caller holds the lock.
func (c *Cond) retire(w *waiter) {
	if w.inq {
		c.unlink(w)
	}
	w.next, c.free = c.free, w
}

// getWaiter returns a waiter record owned by the caller until the wait
// ends. The caller holds l.
func (c *Cond) getWaiter() *waiter {
	if c.cl != nil {
		// l is the guard.
		w := c.free
		if w != nil {
			c.free, w.next = w.next, nil
			return w
		}
		return c.newWaiter(-1)
	}
	const all = 1<<len(c.spare) - 1
	for {
		b := c.busy.Load()
		if b == all {
			break
		}
		i := bits.TrailingZeros32(^b)
		if c.busy.CompareAndSwap(b, b|1<<i) {
			w := c.spare[i]
			if w == nil {
				w = c.newWaiter(i)
				c.spare[i] = w
			}
			return w
		}
	}
	c.mu.Lock()
	w := c.free
	if w != nil {
		c.free, w.next = w.next, nil
	}
	c.mu.Unlock()
	if w == nil {
		w = c.newWaiter(-1)
	}
	return w
}

func (c *Cond) newWaiter(slot int) *waiter {
	w := &waiter{c: c, slot: slot}
	w.park.L = w
	return w
}

// putSpare returns the waiter record of a Cond on a plain sync.Locker.
func (c *Cond) putSpare(w *waiter) {
	if w.slot >= 0 {
		c.busy.And(^uint32(1 << w.slot))
		return
	}
	c.mu.Lock()
	w.next, c.free = c.free, w
	c.mu.Unlock()
}

// decide ends w's current wait with decision d, unless something else
// already decided it, and reports whether it did.
func (c *Cond) decide(w *waiter, expect, gen, d uint64) bool {
	if !w.st.CompareAndSwap(expect, gen<<stShift|d) {
		return false
	}
	c.n.Add(-1)
	w.park.Broadcast()
	return true
}

// expire ends a timed-out or cancelled wait, unless a Signal already
// chose the waiter or the wait is over. It takes no lock: the waiter
// leaves the queue itself, or a Signal skips it.
func (c *Cond) expire(w *waiter, expect, gen uint64) {
	c.decide(w, expect, gen, stGone)
}

func (c *Cond) release() int {
	if c.cl != nil {
		return c.cl.ReleaseAll()
	}
	c.l.Unlock()
	return 1
}

func (c *Cond) restore(n int) {
	if c.cl != nil {
		c.cl.Restore(n)
		return
	}
	c.l.Lock()
}

// Signal wakes the goroutine that has waited longest, if any.
// On an owner-aware lock, it panics with ErrNotOwner unless the caller
// holds the lock.
func (c *Cond) Signal() {
	c.checkOwner("signal")
	c.signal()
}

// Broadcast wakes all goroutines waiting on c.
// On an owner-aware lock, it panics with ErrNotOwner unless the caller
// holds the lock.
func (c *Cond) Broadcast() {
	c.checkOwner("broadcast")
	if c.cl == nil {
		c.mu.Lock()
		defer c.mu.Unlock()
	}
	for w := c.head; w != nil; w = c.head {
		c.unlink(w)
		c.decide(w, w.expect, w.gen, stWoken)
	}
}

func (c *Cond) signal() {
	if c.cl == nil {
		c.mu.Lock()
		defer c.mu.Unlock()
	}
	c.signalQueued()
}

// signalQueued wakes the first queued waiter whose wait is not yet decided.
// The caller holds the guard.
func (c *Cond) signalQueued() {
	for w := c.head; w != nil; w = c.head {
		c.unlink(w)
		if c.decide(w, w.expect, w.gen, stWoken) {
			return
		}
		// It timed out or was cancelled: the signal goes to the next.
	}
}

// Waiters returns the number of goroutines waiting on c and not yet
// signalled (Java's getWaitQueueLength). A signalled, timed-out or
// cancelled goroutine that has not yet retaken the lock no longer counts.
//
// Called by a goroutine that holds c's owner-aware lock, or on a Cond
// bound to a plain sync.Locker, the count is exact at the moment of the
// call: it counts the queued waiters whose wait is not yet decided. Called
// without holding an owner-aware lock (Java does not allow that) it reads
// a counter kept beside the queue, which can lag a concurrent timeout or
// cancellation by a moment. Either way the value may be out of date by the
// time it is used: use it for monitoring and tests.
func (c *Cond) Waiters() int {
	c.check()
	switch {
	case c.cl == nil:
		c.mu.Lock()
		defer c.mu.Unlock()
	case !c.cl.Owned():
		return int(c.n.Load())
	}
	// The guard is held: the queue is stable, and a wait is decided by the
	// CompareAndSwap on st, so this count and the decisions agree.
	n := 0
	for w := c.head; w != nil; w = w.next {
		if w.st.Load() == w.expect {
			n++
		}
	}
	return n
}

func (c *Cond) push(w *waiter) {
	w.inq = true
	w.prev = c.tail
	if c.tail == nil {
		c.head = w
	} else {
		c.tail.next = w
	}
	c.tail = w
}

func (c *Cond) unlink(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		c.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		c.tail = w.prev
	}
	w.prev, w.next, w.inq = nil, nil, false
}

type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
