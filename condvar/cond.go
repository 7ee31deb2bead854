package condvar

import (
	"context"
	"fmt"
	"sync"
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
// their timer or context callback. A Cond holds no goroutine and no timer
// for a waiter that has returned.
type Cond struct {
	_    noCopy
	self *Cond // New sets it; a copy or a zero Cond fails the check

	l  sync.Locker
	cl core.CondLocker // nil when l cannot tell its owner

	mu   sync.Mutex // guards everything below and the fields of every waiter
	head *waiter
	tail *waiter
	n    int     // waiters queued and not yet signalled
	free *waiter // waiters to reuse, linked by next
}

// waiter is one goroutine's wait. It parks on its own sync.Cond, bound to
// Cond.mu, so that Signal wakes exactly the waiter it chose.
//
// Rejected alternative: a channel per waiter. A channel must be made per
// wait (one made inside a testing/synctest bubble must not be used outside
// it, so it cannot be pooled), which cost two allocations per Wait and made
// a ping-pong through the Cond 2.7 times slower than through sync.Cond.
// sync.Cond.Wait is durably blocking inside a bubble, needs no allocation,
// and is safe to reuse across bubbles.
type waiter struct {
	park  sync.Cond
	prev  *waiter
	next  *waiter
	gen   uint64 // counts uses, so a stale timer or context callback is ignored
	inq   bool
	woken bool // dequeued by Signal (or Broadcast)
	gone  bool // dequeued by its own timeout or cancellation
}

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
	for cond() {
		c.Wait()
	}
}

// WaitUntil waits until pred returns true, calling it with the lock held
// (Ruby's wait_until).
func (c *Cond) WaitUntil(pred func() bool) {
	for !pred() {
		c.Wait()
	}
}

// wait queues the caller, releases the lock, parks until signalled, timed
// out (d > 0) or cancelled (ctx not nil), and retakes the lock. It reports
// whether it was signalled.
//
// Signal, a timeout and a cancellation all dequeue the waiter under c.mu,
// so exactly one of them decides how the wait ends: a Signal never chooses
// a waiter that has already timed out (it goes to the next one), and a
// waiter that a Signal chose returns true even if its time is up by the
// time it runs. No signal is lost.
func (c *Cond) wait(d time.Duration, ctx context.Context) bool {
	c.mu.Lock()
	w := c.free
	if w != nil {
		c.free, w.next = w.next, nil
	} else {
		w = &waiter{}
		w.park.L = &c.mu
	}
	w.gen++
	w.woken, w.gone = false, false
	gen := w.gen
	c.push(w)
	c.mu.Unlock()
	// Queued before the lock is released: a Signal made after the release
	// finds the waiter.
	holds := c.release()
	c.mu.Lock()
	var stop func() bool
	switch {
	case d > 0:
		stop = time.AfterFunc(d, func() { c.expire(w, gen) }).Stop
	case ctx != nil:
		stop = context.AfterFunc(ctx, func() { c.expire(w, gen) })
	}
	for !w.woken && !w.gone {
		w.park.Wait()
	}
	woken := w.woken
	w.gen++ // a callback still on its way now finds a stale generation
	w.next, c.free = c.free, w
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
	c.restore(holds)
	return woken
}

// expire ends a timed-out or cancelled wait, unless a Signal already
// chose the waiter or the wait is over.
func (c *Cond) expire(w *waiter, gen uint64) {
	c.mu.Lock()
	if w.gen == gen && w.inq {
		c.unlink(w)
		c.n--
		w.gone = true
		w.park.Signal()
	}
	c.mu.Unlock()
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
	c.mu.Lock()
	for w := c.head; w != nil; w = w.next {
		w.inq, w.woken = false, true
		w.park.Signal()
	}
	c.head, c.tail, c.n = nil, nil, 0
	c.mu.Unlock()
}

func (c *Cond) signal() {
	c.mu.Lock()
	if w := c.head; w != nil {
		c.unlink(w)
		c.n--
		w.woken = true
		w.park.Signal()
	}
	c.mu.Unlock()
}

// Waiters returns the number of goroutines waiting on c and not yet
// signalled (Java's getWaitQueueLength). A signalled goroutine that has not
// yet retaken the lock no longer counts. The value may be out of date by the
// time it is read: use it for monitoring and tests.
func (c *Cond) Waiters() int {
	c.check()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
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
	c.n++
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
