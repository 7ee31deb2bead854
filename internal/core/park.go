package core

import (
	"sync"
	"sync/atomic"
	"time"
)

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
	sema         bool   // guarded by lock.mu: this park is on sem, not ch
	cancelled    error  // written under lock.mu before the token is posted: dequeued by cancel, with this error
	handoff      bool   // written under lock.mu before the token is sent: the lock was handed to g
	start        int64  // when the goroutine started to wait (nanotime)
	epoch        uint64 // the registration's, set by register: unregister removes only its own
	// exited is the holder that the exited-holder check found exited
	// (exited.go), or 0; stored before the token that tells the waiter.
	exited atomic.Int64
	// For a wait on an RWLock (rwlock.go): the lock, and what is awaited
	// (waitLock: lock's owner; waitRead: the writer, for a read hold;
	// waitDrain: the readers, by the writer that holds lock). Set before
	// register and never changed.
	rw     *RWLock
	awaits uint8
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

// testHookCancelled, if set (by tests), runs in cancelQueued once the
// waiter is dequeued, before its semaphore wakes it.
var testHookCancelled func(*waiter)

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
// gives up by itself unregisters before it abandons (see parker.quit):
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
