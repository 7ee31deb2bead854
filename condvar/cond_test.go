package condvar_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/internal/testkit/locktest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

func TestCondNew(t *testing.T) {
	forEachKind(t, func(t *testing.T, _ lockKind, l sync.Locker, _ func() bool, c *condvar.Cond) {
		assert.Equal(t, l, c.Locker())
		assert.Equal(t, l, c.L)
		assert.Zero(t, c.Waiters())
	})
}

func TestCondWaitSignal(t *testing.T) {
	forEachKind(t, func(t *testing.T, _ lockKind, l sync.Locker, held func() bool, c *condvar.Cond) {
		ready := false // guarded by l
		res := queueWaiter(t, l, c, 1, func() bool {
			for !ready {
				c.Wait()
			}
			return held == nil || held()
		})
		l.Lock()
		ready = true
		c.Signal()
		assert.Zero(t, c.Waiters(), "signalled waiter still counted")
		l.Unlock()
		assert.True(t, testutil.Await(t, res, "Wait"), "Wait returned without the lock")
		assert.Zero(t, c.Waiters())
	})
}

func TestCondWaitTimeout(t *testing.T) {
	forEachKind(t, func(t *testing.T, _ lockKind, l sync.Locker, held func() bool, c *condvar.Cond) {
		t.Run("signalled", func(t *testing.T) {
			res := queueWaiter(t, l, c, 1, func() [2]bool {
				return [2]bool{c.WaitTimeout(testutil.Liveness), held == nil || held()}
			})
			l.Lock()
			c.Signal()
			l.Unlock()
			assert.Equal(t, [2]bool{true, true}, testutil.Await(t, res, "WaitTimeout"), "WaitTimeout reports the signal and holds the lock")
		})
		t.Run("timed out", func(t *testing.T) {
			l.Lock()
			assert.False(t, c.WaitTimeout(time.Millisecond))
			if held != nil {
				assert.True(t, held())
			}
			assert.Zero(t, c.Waiters(), "timed-out waiter left in the queue")
			l.Unlock()
		})
		t.Run("non-positive", func(t *testing.T) {
			l.Lock()
			assert.False(t, c.WaitTimeout(0))
			assert.False(t, c.WaitTimeout(-time.Hour))
			if held != nil {
				assert.True(t, held())
			}
			assert.Zero(t, c.Waiters())
			l.Unlock()
		})
	})
}

func TestCondWaitContext(t *testing.T) {
	forEachKind(t, func(t *testing.T, _ lockKind, l sync.Locker, held func() bool, c *condvar.Cond) {
		type result struct {
			err  error
			held bool
		}
		wait := func(ctx context.Context) func() result {
			return func() result {
				err := c.WaitContext(ctx)
				return result{err, held == nil || held()}
			}
		}
		t.Run("signalled", func(t *testing.T) {
			res := queueWaiter(t, l, c, 1, wait(context.Background()))
			l.Lock()
			c.Signal()
			l.Unlock()
			assert.Equal(t, result{nil, true}, testutil.Await(t, res, "WaitContext"))
		})
		t.Run("cancelled while waiting", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			res := queueWaiter(t, l, c, 1, wait(ctx))
			cancel()
			assert.Equal(t, result{context.Canceled, true}, testutil.Await(t, res, "WaitContext"))
			assert.Zero(t, c.Waiters(), "cancelled waiter left in the queue")
		})
		t.Run("deadline", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			defer cancel()
			l.Lock()
			assert.ErrorIs(t, c.WaitContext(ctx), context.DeadlineExceeded)
			if held != nil {
				assert.True(t, held())
			}
			assert.Zero(t, c.Waiters())
			l.Unlock()
		})
		t.Run("already done", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			l.Lock()
			assert.ErrorIs(t, c.WaitContext(ctx), context.Canceled)
			assert.Zero(t, c.Waiters())
			l.Unlock()
		})
	})
}

func TestCondWaitWhileAndUntil(t *testing.T) {
	forEachKind(t, func(t *testing.T, _ lockKind, l sync.Locker, held func() bool, c *condvar.Cond) {
		const target = 5
		count := 0       // guarded by l
		unheldCalls := 0 // guarded by l (or counts a call without it)
		check := func() {
			if held != nil && !held() {
				unheldCalls++
			}
		}
		done := make(chan struct{}, 2)
		go func() {
			l.Lock()
			c.WaitWhile(func() bool { check(); return count < target })
			l.Unlock()
			done <- struct{}{}
		}()
		go func() {
			l.Lock()
			c.WaitUntil(func() bool { check(); return count >= target })
			l.Unlock()
			done <- struct{}{}
		}()
		for range target {
			l.Lock()
			count++
			c.Broadcast()
			l.Unlock()
		}
		testutil.Await(t, done, "WaitWhile/WaitUntil")
		testutil.Await(t, done, "WaitWhile/WaitUntil")
		l.Lock()
		assert.Zero(t, unheldCalls, "predicate called without the lock")
		// Already true: no wait at all.
		c.WaitUntil(func() bool { return true })
		c.WaitWhile(func() bool { return false })
		l.Unlock()
		assert.Zero(t, c.Waiters())
	})
}

func TestCondBroadcast(t *testing.T) {
	forEachKind(t, func(t *testing.T, _ lockKind, l sync.Locker, _ func() bool, c *condvar.Cond) {
		const n = 6
		var results []<-chan bool
		for i := range n {
			timed := i%2 == 1
			results = append(results, queueWaiter(t, l, c, i+1, func() bool {
				if timed {
					return c.WaitTimeout(testutil.Liveness)
				}
				c.Wait()
				return true
			}))
		}
		l.Lock()
		c.Broadcast()
		assert.Zero(t, c.Waiters(), "broadcast waiters still counted before they retake the lock")
		l.Unlock()
		for _, r := range results {
			assert.True(t, testutil.Await(t, r, "Broadcast"))
		}
		l.Lock()
		c.Broadcast() // nobody waiting: nothing happens
		c.Signal()
		assert.Zero(t, c.Waiters())
		l.Unlock()
	})
}

// Waiters counts goroutines waiting and not yet signalled: a signalled
// goroutine that has not yet retaken the lock (held here by the test) no
// longer counts.
func TestCondWaitersExcludesSignalled(t *testing.T) {
	forEachKind(t, func(t *testing.T, _ lockKind, l sync.Locker, _ func() bool, c *condvar.Cond) {
		first := queueWaiter(t, l, c, 1, func() bool { c.Wait(); return true })
		second := queueWaiter(t, l, c, 2, func() bool { c.Wait(); return true })
		l.Lock()
		assert.Equal(t, 2, c.Waiters())
		c.Signal()
		assert.Equal(t, 1, c.Waiters())
		c.Signal()
		assert.Equal(t, 0, c.Waiters())
		l.Unlock()
		testutil.Await(t, first, "first")
		testutil.Await(t, second, "second")
	})
}

// Signal wakes waiters in the order they started waiting. Each waiter is
// queued alone (Waiters tells when), then each Signal is followed by the
// return of exactly the next waiter in line.
func TestCondSignalFIFO(t *testing.T) {
	forEachKind(t, func(t *testing.T, _ lockKind, l sync.Locker, _ func() bool, c *condvar.Cond) {
		const n = 8
		order := make(chan int, n)
		for i := range n {
			go func() {
				l.Lock()
				switch i % 3 {
				case 0:
					c.Wait()
				case 1:
					c.WaitTimeout(testutil.Liveness)
				default:
					_ = c.WaitContext(context.Background())
				}
				l.Unlock()
				order <- i
			}()
			testutil.WaitFor(t, "waiter queued", func() bool { return c.Waiters() == i+1 })
		}
		for i := range n {
			l.Lock()
			c.Signal()
			l.Unlock()
			assert.Equal(t, i, testutil.Await(t, order, "Signal"), "Signal %d woke the wrong waiter", i)
		}
		assert.Zero(t, c.Waiters())
	})
}

// With a plain sync.Locker, which cannot tell its owner, Signal and
// Broadcast work without the lock, as sync.Cond's do.
func TestCondPlainLockerSignalWithoutLock(t *testing.T) {
	var mu sync.Mutex
	c := condvar.New(&mu)
	a := queueWaiter(t, &mu, c, 1, func() bool { c.Wait(); return true })
	b := queueWaiter(t, &mu, c, 2, func() bool { c.Wait(); return true })
	c.Signal()
	testutil.Await(t, a, "Signal without the lock")
	assert.Equal(t, 1, c.Waiters())
	c.Broadcast()
	testutil.Await(t, b, "Broadcast without the lock")
	assert.Zero(t, c.Waiters())

	var rw sync.RWMutex
	rc := condvar.New(rw.RLocker())
	r := queueWaiter(t, rw.RLocker(), rc, 1, func() bool { return rc.WaitTimeout(testutil.Liveness) })
	rc.Signal()
	assert.True(t, testutil.Await(t, r, "RLocker"))
}

// TestCondMisuse: on an owner-aware lock, every wait, Signal and Broadcast
// made without holding the lock panics with ErrNotOwner (matching the
// sentinel under all three package names), names the goroutine, and
// changes nothing: a legitimate waiter stays queued and counted, and a
// holder still holds the lock.
func TestCondMisuse(t *testing.T) {
	expired, cancel := context.WithCancel(context.Background())
	cancel()
	ops := []struct {
		name, verb string
		call       func(c *condvar.Cond)
	}{
		{"Wait", "wait", (*condvar.Cond).Wait},
		{"WaitTimeout", "wait", func(c *condvar.Cond) { c.WaitTimeout(time.Hour) }},
		{"WaitTimeout(0)", "wait", func(c *condvar.Cond) { c.WaitTimeout(0) }},
		{"WaitContext", "wait", func(c *condvar.Cond) { _ = c.WaitContext(context.Background()) }},
		{"WaitContext(done)", "wait", func(c *condvar.Cond) { _ = c.WaitContext(expired) }},
		{"WaitWhile", "wait", func(c *condvar.Cond) { c.WaitWhile(func() bool { return true }) }},
		{"WaitUntil", "wait", func(c *condvar.Cond) { c.WaitUntil(func() bool { return false }) }},
		// The misuse is caught even when the predicate would not wait.
		{"WaitWhile false at once", "wait", func(c *condvar.Cond) { c.WaitWhile(func() bool { return false }) }},
		{"WaitUntil true at once", "wait", func(c *condvar.Cond) { c.WaitUntil(func() bool { return true }) }},
	}
	check := func(t *testing.T, v any, verb string, me int64) {
		t.Helper()
		require.NotNil(t, v, "expected a panic")
		err, ok := v.(error)
		require.Truef(t, ok, "panic value %#v is not an error", v)
		assert.ErrorIs(t, err, condvar.ErrNotOwner)
		assert.ErrorIs(t, err, mutex.ErrNotOwner)
		assert.ErrorIs(t, err, monitor.ErrNotOwner)
		assert.Contains(t, err.Error(), fmt.Sprintf("condvar: %s without holding the lock", verb))
		assert.Contains(t, err.Error(), fmt.Sprintf("goroutine %d", me))
	}
	for _, k := range lockKinds() {
		if !k.ownerAware {
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			for _, op := range ops {
				t.Run(op.name, func(t *testing.T) {
					locktest.ForEachMode(t, func(t *testing.T) {
						t.Run("free, with a waiter", func(t *testing.T) {
							l, _ := k.new()
							c := condvar.New(l)
							res := queueWaiter(t, l, c, 1, func() bool { c.Wait(); return true })
							l.Lock() // the waiter is in Wait: the lock was free
							l.Unlock()
							check(t, testutil.Catch(func() { op.call(c) }), op.verb, testutil.GoroutineID())
							v, me := testutil.OnOther(t, func() { op.call(c) })
							check(t, v, op.verb, me)
							assert.Equal(t, 1, c.Waiters(), "a misuse changed the queue")
							l.Lock()
							c.Signal()
							l.Unlock()
							testutil.Await(t, res, "waiter after the misuse")
						})
						t.Run("held by another goroutine", func(t *testing.T) {
							l, held := k.new()
							c := condvar.New(l)
							l.Lock()
							v, me := testutil.OnOther(t, func() { op.call(c) })
							check(t, v, op.verb, me)
							assert.True(t, held(), "a misuse took the lock from its holder")
							assert.Zero(t, c.Waiters())
							l.Unlock()
						})
					})
				})
			}
		})
	}
}

// TestCondNoLostWakeupOnTimeout races a waiter's timeout against a Signal,
// with a second waiter queued behind it that waits without a limit. The
// one Signal must end up somewhere: either the first waiter reports it
// (WaitTimeout true, the second still waiting) or the first reports a
// timeout and the second has been signalled, whichever way the race went.
func TestCondNoLostWakeupOnTimeout(t *testing.T) {
	rounds := 300
	if testing.Short() {
		rounds = 50
	}
	forEachKind(t, func(t *testing.T, _ lockKind, l sync.Locker, _ func() bool, c *condvar.Cond) {
		var signalled, timedOut int
		for i := range rounds {
			d := time.Duration(1+rand.IntN(50)) * time.Microsecond
			first := queueOrLeave(t, l, func() bool { return c.WaitTimeout(d) })
			second := queueWaiterAfter(t, l, c)
			l.Lock() // both have released it: the second is queued
			c.Signal()
			l.Unlock()
			if racesWon(t, l, c, i, testutil.Await(t, first, "first waiter"), second) {
				signalled++
			} else {
				timedOut++
			}
		}
		t.Logf("signal reached the timed waiter %d times, passed on or went to the other %d times", signalled, timedOut)
	})
}

// TestCondNoLostWakeupOnCancel is TestCondNoLostWakeupOnTimeout with
// WaitContext and a cancellation made concurrently with the Signal.
func TestCondNoLostWakeupOnCancel(t *testing.T) {
	rounds := 300
	if testing.Short() {
		rounds = 50
	}
	forEachKind(t, func(t *testing.T, _ lockKind, l sync.Locker, _ func() bool, c *condvar.Cond) {
		var signalled, cancelled int
		for i := range rounds {
			ctx, cancel := context.WithCancel(context.Background())
			first := queueOrLeave(t, l, func() bool {
				err := c.WaitContext(ctx)
				if err != nil && err != context.Canceled {
					panic(err)
				}
				return err == nil
			})
			second := queueWaiterAfter(t, l, c)
			go cancel()
			if i%2 == 0 {
				runtime.Gosched()
			}
			l.Lock()
			c.Signal()
			l.Unlock()
			if racesWon(t, l, c, i, testutil.Await(t, first, "first waiter"), second) {
				signalled++
			} else {
				cancelled++
			}
			cancel()
		}
		t.Logf("signal reached the cancelled waiter %d times, passed on or went to the other %d times", signalled, cancelled)
	})
}

// queueOrLeave starts a goroutine that locks l, then runs wait; it returns
// once that goroutine holds l, so the next to lock l queues behind it.
func queueOrLeave(t *testing.T, l sync.Locker, wait func() bool) <-chan bool {
	t.Helper()
	locked := make(chan struct{})
	res := make(chan bool, 1)
	go func() {
		l.Lock()
		close(locked)
		r := wait()
		l.Unlock()
		res <- r
	}()
	testutil.Await(t, locked, "first waiter locked")
	return res
}

// queueWaiterAfter starts a goroutine that waits on c without a limit and
// returns once it holds l, which it can only take once the first waiter
// released it (inside its wait, or on return).
func queueWaiterAfter(t *testing.T, l sync.Locker, c *condvar.Cond) <-chan struct{} {
	t.Helper()
	locked := make(chan struct{})
	done := make(chan struct{})
	go func() {
		l.Lock()
		close(locked)
		c.Wait()
		l.Unlock()
		close(done)
	}()
	testutil.Await(t, locked, "second waiter locked")
	return done
}

// racesWon checks where the one Signal went and returns whether the first
// waiter reported it. Once both the Signal and the first waiter have
// returned, the second waiter has been dequeued if and only if the first
// did not take the signal (a first waiter that loses to its timeout after
// being chosen passes the signal on before it returns).
func racesWon(t *testing.T, l sync.Locker, c *condvar.Cond, round int, firstWoken bool, second <-chan struct{}) bool {
	t.Helper()
	if firstWoken {
		require.Equal(t, 1, c.Waiters(), "round %d: the first waiter took the signal, the second must still wait", round)
		l.Lock()
		c.Signal()
		l.Unlock()
	} else {
		require.Equal(t, 0, c.Waiters(), "round %d: lost wakeup: the first waiter gave up and the second was not signalled", round)
	}
	testutil.Await(t, second, "second waiter")
	require.Zero(t, c.Waiters())
	return firstWoken
}

// A waiter that times out or is cancelled leaves nothing behind: no queue
// entry, no goroutine, no timer (the timer would show as a goroutine only
// while firing, so goleak checks what it can).
func TestCondTimedOutWaitersLeaveNothing(t *testing.T) {
	forEachKind(t, func(t *testing.T, _ lockKind, l sync.Locker, _ func() bool, c *condvar.Cond) {
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l.Lock()
				defer l.Unlock()
				if i%2 == 0 {
					if c.WaitTimeout(time.Duration(1+i) * time.Microsecond) {
						panic("WaitTimeout reported a signal nobody sent")
					}
					return
				}
				ctx, cancel := context.WithCancel(context.Background())
				go cancel()
				if c.WaitContext(ctx) == nil {
					panic("WaitContext reported a signal nobody sent")
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		testutil.Await(t, done, "timed waiters")
		assert.Zero(t, c.Waiters())
		goleak.VerifyNone(t)
	})
}

// After a timed-out wait the queue is empty, and a later waiter is
// signalled as usual.
func TestCondSignalAfterTimeoutsReachesNewWaiter(t *testing.T) {
	forEachKind(t, func(t *testing.T, _ lockKind, l sync.Locker, _ func() bool, c *condvar.Cond) {
		l.Lock()
		assert.False(t, c.WaitTimeout(time.Microsecond))
		l.Unlock()
		res := queueWaiter(t, l, c, 1, func() bool { return c.WaitTimeout(testutil.Liveness) })
		l.Lock()
		c.Signal()
		l.Unlock()
		assert.True(t, testutil.Await(t, res, "waiter after a timed-out one"))
	})
}

// TestCondSignalSkipsExpiredWaiterStillQueued: a waiter whose context is
// cancelled while another goroutine holds the lock has its wait decided
// (it stops counting in Waiters) but cannot leave the queue until it
// retakes the lock. A Signal made meanwhile must skip it and wake the
// waiter behind it; the cancelled waiter must still report the
// cancellation, and both must leave nothing queued.
func TestCondSignalSkipsExpiredWaiterStillQueued(t *testing.T) {
	forEachKind(t, func(t *testing.T, _ lockKind, l sync.Locker, _ func() bool, c *condvar.Cond) {
		for range 20 { // the records are reused: later rounds run on recycled waiters
			ctx, cancel := context.WithCancel(context.Background())
			first := queueWaiter(t, l, c, 1, func() bool { return c.WaitContext(ctx) == nil })
			second := queueWaiter(t, l, c, 2, func() bool { c.Wait(); return true })
			l.Lock()
			cancel()
			testutil.WaitFor(t, "cancelled waiter no longer counted", func() bool { return c.Waiters() == 1 })
			c.Signal()
			assert.Zero(t, c.Waiters(), "Signal did not reach the waiter behind the cancelled one")
			l.Unlock()
			assert.False(t, testutil.Await(t, first, "cancelled waiter"), "cancelled waiter reported a signal")
			assert.True(t, testutil.Await(t, second, "second waiter"))
			l.Lock()
			c.Signal() // nobody waits: must not wake or break anything
			l.Unlock()
			assert.Zero(t, c.Waiters())
		}
	})
}

// panickyLocker is a user's owner-aware lock whose Unlock panics once when
// armed (before unlocking).
type panickyLocker struct {
	*mutex.Mutex
	armed bool // guarded by the mutex
}

func (p *panickyLocker) Unlock() {
	if p.armed {
		p.armed = false
		panic("panickyLocker: Unlock")
	}
	p.Mutex.Unlock()
}

// TestCondWaitPanicInUnlockLosesNoSignal: when the lock's Unlock panics
// inside Wait, the panic leaves Wait with the lock still held, and the
// abandoned wait must not absorb a later Signal meant for a real waiter.
func TestCondWaitPanicInUnlockLosesNoSignal(t *testing.T) {
	l := &panickyLocker{Mutex: new(mutex.Mutex)}
	c := condvar.New(l)
	v, _ := testutil.OnOther(t, func() {
		l.Lock()
		defer l.Unlock() // disarmed by then: really unlocks
		l.armed = true
		c.Wait()
	})
	assert.Equal(t, "panickyLocker: Unlock", v)
	assert.False(t, l.Locked(), "lock not released after the panic")
	assert.Zero(t, c.Waiters(), "abandoned wait still counted")

	woken := queueWaiter(t, l, c, 1, func() bool { c.Wait(); return true })
	l.Lock()
	c.Signal()
	l.Unlock()
	assert.True(t, testutil.Await(t, woken, "waiter behind the abandoned wait"))
	assert.Zero(t, c.Waiters())
}

// releasePanicker is a lock whose Unlock, once armed, releases the lock and
// then panics, after letting the test act in between (released, proceed).
type releasePanicker struct {
	sync.Locker
	armed             atomic.Bool
	released, proceed chan struct{}
}

func newReleasePanicker(l sync.Locker) *releasePanicker {
	return &releasePanicker{Locker: l, released: make(chan struct{}), proceed: make(chan struct{})}
}

func (p *releasePanicker) Unlock() {
	p.Locker.Unlock()
	if p.armed.CompareAndSwap(true, false) {
		close(p.released)
		<-p.proceed
		panic("releasePanicker: Unlock")
	}
}

// ownedReleasePanicker is a releasePanicker that can tell its owner.
type ownedReleasePanicker struct {
	*releasePanicker
	m *mutex.Mutex
}

func (o ownedReleasePanicker) Owned() bool { return o.m.Owned() }

// TestCondWaitPanicAfterReleaseLosesNoSignal: the lock's Unlock inside
// Wait releases the lock and then panics. In between, another waiter
// queues and a Signal chooses the first, doomed waiter (FIFO): the signal
// must be passed on to the second.
func TestCondWaitPanicAfterReleaseLosesNoSignal(t *testing.T) {
	for _, tc := range []struct {
		name string
		new  func() (sync.Locker, *releasePanicker)
	}{
		{"sync.Mutex", func() (sync.Locker, *releasePanicker) {
			p := newReleasePanicker(new(sync.Mutex))
			return p, p
		}},
		{"owner-aware Locker", func() (sync.Locker, *releasePanicker) {
			m := new(mutex.Mutex)
			p := newReleasePanicker(m)
			return ownedReleasePanicker{p, m}, p
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, p := tc.new()
			c := condvar.New(l)
			first := make(chan any, 1)
			go func() {
				defer func() { first <- recover() }()
				l.Lock()
				p.armed.Store(true)
				c.Wait()
			}()
			testutil.Await(t, p.released, "first waiter's Unlock released the lock")
			second := queueWaiter(t, l, c, 2, func() bool { c.Wait(); return true })
			l.Lock()
			c.Signal() // to the first waiter, about to panic
			l.Unlock()
			close(p.proceed)
			assert.Equal(t, "releasePanicker: Unlock", testutil.Await(t, first, "first waiter's panic"))
			assert.True(t, testutil.Await(t, second, "second waiter, which the signal must reach"))
			assert.Zero(t, c.Waiters())
		})
	}
}

// doneBomb is a context whose Done panics.
type doneBomb struct{ context.Context }

func (doneBomb) Done() <-chan struct{} { panic("doneBomb: Done") }

// TestCondWaitContextPanicInDone: WaitContext with a context whose Done
// panics leaves Wait with the lock held, counts no waiter and loses no
// later Signal.
func TestCondWaitContextPanicInDone(t *testing.T) {
	forEachKind(t, func(t *testing.T, k lockKind, l sync.Locker, held func() bool, c *condvar.Cond) {
		v, _ := testutil.OnOther(t, func() {
			l.Lock()
			defer l.Unlock()
			defer func() {
				if held != nil {
					assert.True(t, held(), "lock not held after the panic")
				}
			}()
			_ = c.WaitContext(doneBomb{context.Background()})
		})
		assert.Equal(t, "doneBomb: Done", v)
		assert.Zero(t, c.Waiters(), "abandoned wait still counted")
		woken := queueWaiter(t, l, c, 1, func() bool { c.Wait(); return true })
		l.Lock()
		c.Signal()
		l.Unlock()
		assert.True(t, testutil.Await(t, woken, "waiter after the abandoned wait"))
		assert.Zero(t, c.Waiters())
	})
}
