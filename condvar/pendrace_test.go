//go:build go1.25

package condvar_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/internal/gid"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// A wait parked durably in a bubble with a timeout, on a Cond made in the
// bubble that a goroutine outside it signals: the signal decides the wait
// but cannot wake the waiter, and records it as pending; the waiter's own
// timeout, which fires while the signaller is between the two, finds the
// wait decided. It must still wake the waiter once the record is made
// (else nothing in the bubble ever does: the bubble's clock runs to the
// test's two hours). The hooks hold the signaller between deciding and
// recording until the timeout's callback has looked (and returned, or
// blocked waiting for the record).
func TestSynctestCondTimeoutDuringForeignSignal(t *testing.T) {
	for _, k := range lockKinds() {
		t.Run(k.name, func(t *testing.T) {
			r := newForeignSignalRig(t)
			fired := make(chan int64, 1)
			defer condvar.SetExpireHook(func(hc *condvar.Cond) {
				if hc == r.cp.Load() {
					fired <- gid.Get()
				}
			})()
			released := make(chan struct{})
			go func() { // outside the bubble
				defer close(released)
				<-r.decided
				cb := "goroutine " + strconv.FormatInt(testutil.Await(t, fired, "the timeout's callback"), 10) + " ["
				testutil.WaitFor(t, "the callback done or blocked", func() bool {
					for _, s := range strings.Split(testutil.AllStacks(), "\n\n") {
						if strings.HasPrefix(s, cb) {
							return strings.Contains(s, "[sync.Mutex.Lock")
						}
					}
					return true // exited
				})
				close(r.proceed)
			}()

			synctest.Test(t, func(t *testing.T) {
				l, _ := k.new()
				c := condvar.New(l)
				r.cp.Store(c)
				woke := make(chan bool, 1)
				go func() {
					l.Lock()
					woke <- c.WaitTimeout(time.Hour)
					l.Unlock()
				}()
				synctest.Wait() // the waiter is durably blocked
				r.start <- struct{}{}
				<-r.decided // not durable: the clock waits for the signal's decision
				select {
				case <-woke:
				case <-time.After(2 * time.Hour):
					t.Error("the waiter, decided by a signal from outside as its timeout fired, was never woken")
					<-r.signalled // the wait is recorded as pending
					c.Signal()    // from the bubble: delivers the pending wakeup
					<-woke
				}
			})
			testutil.Await(t, r.signalled, "the signal from outside")
			testutil.Await(t, released, "the helper")
		})
	}
}

// A Signal or Broadcast by a goroutine of the bubble that comes after a
// signal from outside has decided a durable waiter's wait (it takes the
// Cond's mutex after that one) delivers the wakeup that the outside one
// recorded, even though it began while the outside one was under way:
// it looks for pending wakeups once it has taken its turn. The hook
// holds the outside signaller between deciding and recording until the
// bubble's signaller waits for the Cond's mutex behind it.
func TestSynctestCondSignalAfterForeignSignalDelivers(t *testing.T) {
	for _, op := range []struct {
		name string
		f    func(c *condvar.Cond)
	}{
		{"Signal", (*condvar.Cond).Signal},
		{"Broadcast", (*condvar.Cond).Broadcast},
	} {
		t.Run(op.name, func(t *testing.T) {
			r := newForeignSignalRig(t)
			released := make(chan struct{})
			go func() { // outside the bubble
				defer close(released)
				r.awaitSecond("the bubble's signaller waiting for the Cond's mutex", "")
			}()

			synctest.Test(t, func(t *testing.T) {
				l, _ := lockKinds()[1].new() // a mutex.Mutex
				c := condvar.New(l)
				r.cp.Store(c)
				woke := make(chan struct{})
				go func() {
					l.Lock()
					c.Wait()
					l.Unlock()
					close(woke)
				}()
				synctest.Wait() // the waiter is durably blocked
				r.start <- struct{}{}
				<-r.decided
				done := make(chan struct{})
				go func() {
					r.second <- gid.Get()
					op.f(c)
					close(done)
				}()
				select {
				case <-woke:
				case <-time.After(time.Hour):
					t.Errorf("the waiter, decided by a signal from outside, was not woken by the %s after it", op.name)
					<-r.signalled
					c.Signal() // delivers the pending wakeup
					<-woke
				}
				<-done
			})
			testutil.Await(t, r.signalled, "the signal from outside")
			testutil.Await(t, released, "the helper")
		})
	}
}

// A Wait by a goroutine of the bubble that queues after a signal from
// outside has decided a durable waiter's wait (it takes the Cond's mutex
// after that one) delivers the wakeup that the outside one recorded, as
// a Signal does (TestSynctestCondSignalAfterForeignSignalDelivers). The
// second waiter parks on the semaphore (the Cond is shared by then), so
// the bubble's clock stands still while it waits: the helper outside the
// bubble watches for the first waiter, with the liveness deadline.
func TestSynctestCondWaitAfterForeignSignalDelivers(t *testing.T) {
	r := newForeignSignalRig(t)
	first := make(chan struct{}) // closed by the first waiter once woken
	failed := make(chan struct{})
	released := make(chan struct{})
	go func() { // outside the bubble
		defer close(released)
		r.awaitSecond("the second waiter waiting for the Cond's mutex", "(*Cond).getWaiter(")
		timer := time.NewTimer(testutil.Liveness)
		defer timer.Stop()
		select {
		case <-first:
		case <-timer.C:
			close(failed)
		}
	}()

	synctest.Test(t, func(t *testing.T) {
		l, _ := lockKinds()[1].new() // a mutex.Mutex
		c := condvar.New(l)
		r.cp.Store(c)
		next := make(chan struct{})
		go func() {
			l.Lock()
			c.Wait()
			l.Unlock()
			close(first)
		}()
		synctest.Wait() // the first waiter is durably blocked
		r.start <- struct{}{}
		<-r.decided
		go func() {
			l.Lock()
			r.second <- gid.Get()
			c.Wait()
			l.Unlock()
			close(next)
		}()
		select {
		case <-first:
		case <-failed:
			t.Error("the waiter, decided by a signal from outside, was not woken by the Wait after it")
			<-r.signalled
			c.Signal() // delivers the pending wakeup, and wakes the second waiter
			<-first
		}
		l.Lock()
		c.Signal()
		l.Unlock()
		<-next
	})
	testutil.Await(t, r.signalled, "the signal from outside")
	testutil.Await(t, released, "the helper")
}

// foreignSignalRig is what the tests of a signal from outside a bubble,
// held between deciding a durable waiter's wait and recording the wakeup,
// share. The test stores its Cond in cp and, from the bubble, sends on
// start once a waiter is durably blocked: the signaller outside the bubble
// then signals, and the hook holds it after its decision (decided is
// closed) until proceed is closed. signalled is closed when the outside
// Signal returns. A test whose second goroutine of the bubble sends its ID
// on second lets awaitSecond close proceed.
type foreignSignalRig struct {
	t         *testing.T
	cp        atomic.Pointer[condvar.Cond]
	start     chan struct{}
	decided   chan struct{}
	proceed   chan struct{}
	second    chan int64
	signalled chan struct{}
}

// newForeignSignalRig makes the channels (outside the bubble: both sides
// use them), installs the hook until the test ends and starts the
// signaller outside the bubble.
func newForeignSignalRig(t *testing.T) *foreignSignalRig {
	r := &foreignSignalRig{
		t:     t,
		start: make(chan struct{}), decided: make(chan struct{}), proceed: make(chan struct{}),
		second: make(chan int64, 1), signalled: make(chan struct{}),
	}
	// The hook (which a callback of an earlier test's wait may still
	// call) acts on this test's Cond only.
	t.Cleanup(condvar.SetPendHook(func(hc *condvar.Cond) {
		if hc == r.cp.Load() {
			close(r.decided)
			<-r.proceed
		}
	}))
	go func() { // outside the bubble
		defer close(r.signalled)
		<-r.start
		r.cp.Load().Signal()
	}()
	return r
}

// awaitSecond, run outside the bubble, waits until the second goroutine
// waits for the Cond's mutex (behind the outside signaller; in frame too,
// if not ""), then lets the outside signaller record its wakeup. what
// names the wait for a failure.
func (r *foreignSignalRig) awaitSecond(what, frame string) {
	g := "goroutine " + strconv.FormatInt(testutil.Await(r.t, r.second, "the bubble's second goroutine"), 10) + " ["
	testutil.WaitFor(r.t, what, func() bool {
		for _, s := range strings.Split(testutil.AllStacks(), "\n\n") {
			if strings.HasPrefix(s, g) {
				return strings.Contains(s, "[sync.Mutex.Lock") && strings.Contains(s, frame)
			}
		}
		return false
	})
	close(r.proceed)
}

// hookedUnlocker is a user's lock (not owner-aware: a Cond calls its
// Unlock to release it) whose Unlock, once armed, runs hook, unlocks and
// then panics.
type hookedUnlocker struct {
	mu    sync.Mutex
	armed bool // guarded by mu
	hook  func()
}

var errHookedUnlock = errors.New("hookedUnlocker: Unlock")

func (h *hookedUnlocker) Lock() { h.mu.Lock() }

func (h *hookedUnlocker) Unlock() {
	if !h.armed {
		h.mu.Unlock()
		return
	}
	h.armed = false
	h.hook()
	h.mu.Unlock()
	panic(errHookedUnlock)
}

// A wait parked durably in a bubble whose release of the lock panics
// after a signal from outside has decided it (and recorded it as pending,
// as it cannot wake it) leaves Wait with the panic: the wakeup is passed
// on, and nothing of the wait stays behind on the Cond's pending list.
// Else the record, reused by the next wait (here one outside bubbles,
// which parks on it), is woken by a goroutine that delivers that stale
// entry: the outside wait's own queueAndRelease, so that it returns at
// once as signalled (WaitContext nil) though nobody signalled it.
func TestSynctestCondAbandonAfterForeignSignalLeavesNothingPending(t *testing.T) {
	l := &hookedUnlocker{}
	var cp atomic.Pointer[condvar.Cond]
	signal := make(chan struct{}) // outside the bubble: both sides use them
	signalled := make(chan struct{})
	go func() { // outside the bubble
		defer close(signalled)
		<-signal
		cp.Load().Signal()
	}()
	synctest.Test(t, func(t *testing.T) {
		c := condvar.New(l) // in the bubble: its waiters park durably
		cp.Store(c)
		l.hook = func() { // in the wait's release, once it has queued
			signal <- struct{}{}
			<-signalled
		}
		done := make(chan any)
		go func() {
			l.Lock()
			l.armed = true
			done <- testutil.Catch(c.Wait)
		}()
		v := <-done
		err, _ := v.(error)
		require.ErrorIs(t, err, errHookedUnlock, "Wait's panic")
	})

	c := cp.Load()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := make(chan error, 1)
	p := testutil.Spawn(func() {
		l.Lock()
		res <- c.WaitContext(ctx)
		l.Unlock()
	})
	g := p.ID(t)
	testutil.WaitFor(t, "the wait outside bubbles parked, or returned", func() bool {
		if len(res) != 0 {
			return true
		}
		state, stack, ok := testutil.GoroutineDump(g)
		return ok && state != "running" && state != "runnable" && strings.Contains(stack, "sync.runtime_notifyListWait")
	})
	cancel()
	assert.ErrorIs(t, testutil.Await(t, res, "the cancelled wait"), context.Canceled,
		"WaitContext reported a signal that nobody sent")
	require.Nil(t, p.Wait(t))
	assert.Zero(t, c.Waiters())
}
