package condvar_test

// The ticket path: an untimed wait outside bubbles takes a ticket on the
// Cond's notify list without a lock, and settles under the Cond's mutex
// when a waiter was queued or a Broadcast ran while it took the ticket.
// The ticket hook runs a test's action exactly in that window, just before
// or just after the ticket is taken.

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// freeLocker is a lock that every goroutine holds at once, so that a test
// can start a second wait while the first is inside its own; its Unlock
// panics once, in the goroutine it is armed for. It counts the Unlocks
// that did not panic: a waiter calls Unlock once it is queued.
type freeLocker struct {
	armedFor atomic.Int64
	unlocks  atomic.Int32

	// Lock by goroutine lockGateFor waits for lockGate to close, and then
	// panics.
	lockGateFor atomic.Int64
	lockGate    chan struct{}
	lockWaiting chan struct{} // closed when that Lock starts waiting
}

func (l *freeLocker) Lock() {
	if id := testutil.GoroutineID(); l.lockGateFor.CompareAndSwap(id, 0) {
		close(l.lockWaiting)
		<-l.lockGate
		panic("freeLocker: Lock")
	}
}

func (l *freeLocker) Unlock() {
	if id := testutil.GoroutineID(); l.armedFor.CompareAndSwap(id, 0) {
		panic("freeLocker: Unlock")
	}
	l.unlocks.Add(1)
}

// arm makes the calling goroutine's next Unlock of l panic.
func (l *freeLocker) arm() { l.armedFor.Store(testutil.GoroutineID()) }

// onFirstTicket sets the ticket hook to run f in the first wait that
// takes a ticket, just before the ticket if after is false, else just
// after, and resets the hook when the test ends.
func onFirstTicket(t *testing.T, after bool, f func()) {
	var done atomic.Bool
	reset := condvar.SetTicketHook(func(_ *condvar.Cond, taken bool) {
		if taken == after && done.CompareAndSwap(false, true) {
			f()
		}
	})
	t.Cleanup(reset)
}

// firstOf returns which of a and b delivers first ("a" or "b").
func firstOf(t *testing.T, a, b <-chan bool) string {
	t.Helper()
	select {
	case <-a:
		return "a"
	case <-b:
		return "b"
	case <-time.After(testutil.Liveness):
		t.Fatal("Signal woke nobody")
		return ""
	}
}

// TestCondTicketFIFOWithRacingQueuedWaiter: a timed waiter queues while an
// untimed one takes its ticket. Signal wakes whichever came first, by the
// order of the queueing and the ticket: the ticket taken first is kept and
// served first; a ticket taken after the queueing is given up, and its
// waiter queues behind the timed one.
func TestCondTicketFIFOWithRacingQueuedWaiter(t *testing.T) {
	skipWithoutTickets(t)
	for _, tc := range []struct {
		name        string
		ticketFirst bool
	}{{"ticket then queued", true}, {"queued then ticket", false}} {
		t.Run(tc.name, func(t *testing.T) {
			l := new(freeLocker)
			c := condvar.New(l)
			timed := make(chan bool, 1)
			onFirstTicket(t, tc.ticketFirst, func() {
				go func() { timed <- c.WaitTimeout(testutil.Liveness) }()
				want := 1
				if tc.ticketFirst {
					want = 2 // the ticket counts
				}
				testutil.WaitFor(t, "timed waiter queued", func() bool { return c.Waiters() == want })
			})
			untimed := make(chan bool, 1)
			go func() { c.Wait(); untimed <- true }()
			testutil.WaitFor(t, "both released the lock", func() bool { return l.unlocks.Load() == 2 })
			assert.Equal(t, 2, c.Waiters())
			c.Signal()
			first := firstOf(t, untimed, timed)
			if tc.ticketFirst {
				assert.Equal(t, "a", first, "Signal woke the timed waiter, which queued after the ticket was taken")
			} else {
				assert.Equal(t, "b", first, "Signal woke the untimed waiter, which took its ticket after the timed one queued")
			}
			assert.Equal(t, 1, c.Waiters())
			c.Signal()
			if first == "a" {
				assert.True(t, testutil.Await(t, timed, "timed waiter"), "the timed waiter timed out")
			} else {
				testutil.Await(t, untimed, "untimed waiter")
			}
			assert.Zero(t, c.Waiters())
		})
	}
}

// TestCondTicketBroadcastNotPassedOn: a Broadcast runs just after a wait
// took its ticket, and the wait's release of the lock then panics. The
// Broadcast woke it, not a Signal, so nothing is passed on: a waiter that
// came after the Broadcast goes on waiting.
func TestCondTicketBroadcastNotPassedOn(t *testing.T) {
	skipWithoutTickets(t)
	l := new(freeLocker)
	c := condvar.New(l)
	later := make(chan bool, 1)
	onFirstTicket(t, true, func() {
		c.Broadcast()
		go func() { c.Wait(); later <- true }()
		testutil.WaitFor(t, "later waiter waiting", func() bool { return c.Waiters() == 1 })
	})
	v, _ := testutil.OnOther(t, func() { l.arm(); c.Wait() })
	require.Equal(t, "freeLocker: Unlock", v)
	assert.Equal(t, 1, c.Waiters(), "the Broadcast's wakeup was passed on")
	c.Signal()
	testutil.Await(t, later, "later waiter")
	assert.Zero(t, c.Waiters())
}

// TestCondTicketSignalPassedOnAfterSetUpPanic: a Signal notifies a ticket
// whose release of the lock then panics; the signal goes to the next
// waiter. Also when a Broadcast ran just before the ticket was taken (it
// did not cover the ticket, so the ticket's wakeup is the Signal's).
func TestCondTicketSignalPassedOnAfterSetUpPanic(t *testing.T) {
	skipWithoutTickets(t)
	for _, broadcastBefore := range []bool{false, true} {
		name := "plain"
		if broadcastBefore {
			name = "Broadcast before the ticket"
		}
		t.Run(name, func(t *testing.T) {
			l := new(freeLocker)
			c := condvar.New(l)
			next := make(chan bool, 1)
			var before, after atomic.Bool
			reset := condvar.SetTicketHook(func(_ *condvar.Cond, taken bool) {
				if broadcastBefore && !taken && before.CompareAndSwap(false, true) {
					c.Broadcast()
				}
				if taken && after.CompareAndSwap(false, true) {
					go func() { c.Wait(); next <- true }()
					testutil.WaitFor(t, "next waiter waiting", func() bool { return c.Waiters() == 2 })
					c.Signal() // to the first ticket
				}
			})
			t.Cleanup(reset)
			v, _ := testutil.OnOther(t, func() { l.arm(); c.Wait() })
			require.Equal(t, "freeLocker: Unlock", v)
			testutil.Await(t, next, "next waiter, which the signal must reach")
			assert.Zero(t, c.Waiters())
		})
	}
}

// TestCondHammerMixedWaits moves items through a one-slot buffer from
// producers to consumers, with one Cond for "not empty" and one for "not
// full" on the same lock. Every goroutine waits in every way in turn
// (Wait, which parks on a ticket when nobody is queued, WaitTimeout and
// WaitContext, which queue), so tickets and queued waiters race to be
// first; every put and take is announced by one Signal (every fifth by a
// Broadcast). With one slot, a lost wakeup leaves everyone asleep, which
// the liveness deadline catches.
func TestCondHammerMixedWaits(t *testing.T) {
	const producers, consumers, perProducer = 2, 3, 2000
	forEachKind(t, func(t *testing.T, _ lockKind, l sync.Locker, _ func() bool, notEmpty *condvar.Cond) {
		notFull := condvar.New(l)
		const total = producers * perProducer
		full, taken := false, 0 // guarded by l
		var timedOut atomic.Int32
		wait := func(c *condvar.Cond, i int) {
			switch i % 3 {
			case 0:
				c.Wait()
			case 1:
				if !c.WaitTimeout(testutil.Liveness) {
					timedOut.Add(1)
				}
			default:
				_ = c.WaitContext(context.Background())
			}
		}
		announce := func(c *condvar.Cond, i int) {
			if i%5 == 0 {
				c.Broadcast()
			} else {
				c.Signal()
			}
		}
		var wg sync.WaitGroup
		for range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perProducer {
					l.Lock()
					for full {
						wait(notFull, i)
					}
					full = true
					announce(notEmpty, i)
					l.Unlock()
				}
			}()
		}
		for range consumers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					l.Lock()
					for !full && taken < total {
						wait(notEmpty, i)
					}
					if taken == total {
						l.Unlock()
						return
					}
					full = false
					taken++
					if taken == total {
						notEmpty.Broadcast() // the other consumers stop
					}
					announce(notFull, i)
					l.Unlock()
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		testutil.Await(t, done, "every item moved")
		assert.Zero(t, timedOut.Load(), "a goroutine slept through its wakeup for the whole liveness deadline")
		assert.Zero(t, notEmpty.Waiters())
		assert.Zero(t, notFull.Waiters())
	})
}

// TestCondSignalSynchronizesBeforeWaitReturns: a write made before Signal,
// by a goroutine that does not hold the lock, is seen by the Wait that the
// Signal ends, for the race detector too (run with -race): Signal
// synchronizes before that Wait returns, for a ticket and for a queued
// waiter alike.
func TestCondSignalSynchronizesBeforeWaitReturns(t *testing.T) {
	for _, timed := range []bool{false, true} {
		name := "ticket"
		if timed {
			name = "queued"
		}
		t.Run(name, func(t *testing.T) {
			var l sync.Mutex
			c := condvar.New(&l)
			x := 0 // written by the signaller without l
			got := make(chan int, 1)
			go func() {
				l.Lock()
				if timed {
					c.WaitTimeout(testutil.Liveness)
				} else {
					c.Wait()
				}
				got <- x
				l.Unlock()
			}()
			testutil.WaitFor(t, "waiter waiting", func() bool { return c.Waiters() == 1 })
			x = 1
			c.Signal()
			assert.Equal(t, 1, testutil.Await(t, got, "waiter"))
		})
	}
}

// TestCondQueuedSignalNotPassedOnAfterBroadcast: a Signal chooses a queued
// waiter, a Broadcast follows, and the waiter's retake of the lock then
// panics. The Broadcast woke every waiter there was, so the signal is not
// passed on: a waiter that came after the Broadcast goes on waiting.
func TestCondQueuedSignalNotPassedOnAfterBroadcast(t *testing.T) {
	l := &freeLocker{lockGate: make(chan struct{}), lockWaiting: make(chan struct{})}
	c := condvar.New(l)
	first := make(chan any, 1)
	go func() {
		defer func() { first <- recover() }()
		l.lockGateFor.Store(testutil.GoroutineID())
		c.WaitTimeout(testutil.Liveness)
	}()
	testutil.WaitFor(t, "first waiter queued", func() bool { return c.Waiters() == 1 })
	c.Signal()
	testutil.Await(t, l.lockWaiting, "first waiter retaking the lock")
	c.Broadcast()
	later := queueWaiter(t, l, c, 1, func() bool { c.Wait(); return true })
	close(l.lockGate)
	assert.Equal(t, "freeLocker: Lock", testutil.Await(t, first, "first waiter's panic"))
	assert.Equal(t, 1, c.Waiters(), "the signal was passed on after the Broadcast")
	c.Signal()
	testutil.Await(t, later, "later waiter")
	assert.Zero(t, c.Waiters())
}

// TestCondWaitersCountsWaitGivingUpTicket: a wait that took its ticket as
// a timed waiter queued gives the ticket up and queues behind that waiter;
// it counts in Waiters all along, also between giving up the ticket and
// queueing.
func TestCondWaitersCountsWaitGivingUpTicket(t *testing.T) {
	skipWithoutTickets(t)
	l := new(freeLocker)
	c := condvar.New(l)
	timed := make(chan bool, 1)
	onFirstTicket(t, false, func() {
		go func() { timed <- c.WaitTimeout(testutil.Liveness) }()
		testutil.WaitFor(t, "timed waiter queued", func() bool { return c.Waiters() == 1 })
	})
	var moving atomic.Int32
	moving.Store(-1)
	t.Cleanup(condvar.SetMovedHook(func(c *condvar.Cond) { moving.Store(int32(c.Waiters())) }))
	untimed := make(chan bool, 1)
	go func() { c.Wait(); untimed <- true }()
	testutil.WaitFor(t, "both released the lock", func() bool { return l.unlocks.Load() == 2 })
	assert.Equal(t, int32(2), moving.Load(), "Waiters while the untimed wait moved from its ticket to the queue")
	assert.Equal(t, 2, c.Waiters())
	c.Signal()
	assert.True(t, testutil.Await(t, timed, "timed waiter"), "the timed waiter timed out")
	c.Signal()
	testutil.Await(t, untimed, "untimed waiter")
	assert.Zero(t, c.Waiters())
	assert.Zero(t, condvar.SkipLen(c))
}

// TestCondAbandonedTicketsAreDropped: waits whose release of the lock
// panics abandon their tickets. With nobody waiting before them, the Cond
// forgets each at once; behind a goroutine that waits, the Signal that
// wakes it forgets those that followed it. Either way no Signal is spent
// on them: the next waiter is woken by one Signal.
func TestCondAbandonedTicketsAreDropped(t *testing.T) {
	const abandoned = 50
	abandon := func(t *testing.T, l *freeLocker, c *condvar.Cond) {
		t.Helper()
		for range abandoned {
			v := func() (v any) {
				defer func() { v = recover() }()
				l.arm()
				c.Wait()
				return nil
			}()
			require.Equal(t, "freeLocker: Unlock", v)
		}
	}
	t.Run("nobody waiting", func(t *testing.T) {
		l := new(freeLocker)
		c := condvar.New(l)
		abandon(t, l, c)
		assert.Zero(t, condvar.SkipLen(c), "abandoned tickets remembered")
		assert.Zero(t, c.Waiters())
		next := queueWaiter(t, l, c, 1, func() bool { c.Wait(); return true })
		c.Signal()
		testutil.Await(t, next, "next waiter")
		assert.Zero(t, condvar.SkipLen(c))
	})
	t.Run("behind a waiter", func(t *testing.T) {
		l := new(freeLocker)
		c := condvar.New(l)
		first := queueWaiter(t, l, c, 1, func() bool { c.Wait(); return true })
		abandon(t, l, c)
		assert.Equal(t, 1, c.Waiters())
		c.Signal()
		testutil.Await(t, first, "first waiter")
		assert.Zero(t, condvar.SkipLen(c), "abandoned tickets remembered after the Signal passed them")
		next := queueWaiter(t, l, c, 1, func() bool { c.Wait(); return true })
		c.Signal()
		testutil.Await(t, next, "next waiter")
		assert.Zero(t, c.Waiters())
	})
}

// TestCondHammerExactWakeups counts wakeups exactly. Waiters wait in every
// way in turn (Wait, on a ticket when nobody is queued; WaitTimeout and
// WaitContext, queued, with limits that never run out), and a signaller
// holding the lock sends a Signal whenever Waiters counts someone, with a
// token for the waiter it wakes, or every seventh time a Broadcast, with a
// token per waiter counted. Every waiter that returns takes one token. A
// Signal that woke two waiters, or a wakeup nobody sent, finds no token; a
// Signal that woke nobody, or a waiter Waiters counted wrong, leaves one
// over at the end; a wakeup lost for good leaves a waiter asleep.
func TestCondHammerExactWakeups(t *testing.T) {
	const waiters, rounds = 4, 1000
	forEachKind(t, func(t *testing.T, _ lockKind, l sync.Locker, _ func() bool, c *condvar.Cond) {
		tokens := 0 // guarded by l
		var unsent, timedOut, finished atomic.Int32
		var wg sync.WaitGroup
		for g := range waiters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer finished.Add(1)
				for i := range rounds {
					l.Lock()
					woken := true
					switch (g + i) % 3 {
					case 0:
						c.Wait()
					case 1:
						woken = c.WaitTimeout(testutil.Liveness)
					default:
						woken = c.WaitContext(context.Background()) == nil
					}
					switch {
					case !woken:
						timedOut.Add(1)
					case tokens == 0:
						unsent.Add(1)
					default:
						tokens--
					}
					l.Unlock()
				}
			}()
		}
		deadline := time.Now().Add(testutil.Liveness)
		for i := 0; finished.Load() < waiters; i++ {
			l.Lock()
			if n := c.Waiters(); n > 0 {
				if i%7 == 0 {
					tokens += n
					c.Broadcast()
				} else {
					tokens++
					c.Signal()
				}
			}
			l.Unlock()
			if time.Now().After(deadline) {
				t.Fatalf("waiters still asleep after %v: a wakeup was lost", testutil.Liveness)
			}
			runtime.Gosched()
		}
		wg.Wait()
		assert.Zero(t, unsent.Load(), "wakeups that no Signal or Broadcast sent")
		assert.Zero(t, timedOut.Load(), "a waiter slept through its wakeup for the whole liveness deadline")
		assert.Zero(t, tokens, "Signals that woke nobody while Waiters counted someone")
		assert.Zero(t, c.Waiters())
	})
}

// goexitLocker is a lock that every goroutine holds at once (as
// freeLocker), whose Lock or Unlock ends the goroutine it is armed for
// with runtime.Goexit. It counts the Unlocks that did not.
type goexitLocker struct {
	lockFor, unlockFor atomic.Int64
	unlocks            atomic.Int32
}

func (l *goexitLocker) Lock() {
	if l.lockFor.CompareAndSwap(testutil.GoroutineID(), 0) {
		runtime.Goexit()
	}
}

func (l *goexitLocker) Unlock() {
	if l.unlockFor.CompareAndSwap(testutil.GoroutineID(), 0) {
		runtime.Goexit()
	}
	l.unlocks.Add(1)
}

// TestCondTicketSignalPassedOnAfterGoexit: a Signal notifies a ticket
// whose wait then ends its goroutine by runtime.Goexit, in the release of
// the lock or in its retake. The wait never returns, so the signal goes to
// the next waiter, as it does for a panic.
func TestCondTicketSignalPassedOnAfterGoexit(t *testing.T) {
	skipWithoutTickets(t)
	t.Run("release", func(t *testing.T) {
		l := new(goexitLocker)
		c := condvar.New(l)
		next := make(chan bool, 1)
		onFirstTicket(t, true, func() {
			go func() { c.Wait(); next <- true }()
			testutil.WaitFor(t, "next waiter waiting", func() bool { return c.Waiters() == 2 })
			c.Signal() // to the first ticket
		})
		exited := make(chan struct{})
		go func() {
			defer close(exited)
			l.unlockFor.Store(testutil.GoroutineID())
			c.Wait()
			t.Error("Wait returned")
		}()
		testutil.Await(t, exited, "first waiter's Goexit")
		testutil.Await(t, next, "next waiter, which the signal must reach")
		assert.Zero(t, c.Waiters())
	})
	t.Run("retake", func(t *testing.T) {
		l := new(goexitLocker)
		c := condvar.New(l)
		exited := make(chan struct{})
		go func() {
			defer close(exited)
			l.lockFor.Store(testutil.GoroutineID())
			c.Wait()
			t.Error("Wait returned")
		}()
		testutil.WaitFor(t, "first waiter waiting", func() bool { return c.Waiters() == 1 && l.unlocks.Load() == 1 })
		next := make(chan bool, 1)
		go func() { c.Wait(); next <- true }()
		testutil.WaitFor(t, "next waiter waiting", func() bool { return c.Waiters() == 2 && l.unlocks.Load() == 2 })
		c.Signal() // to the first ticket
		testutil.Await(t, exited, "first waiter's Goexit")
		testutil.Await(t, next, "next waiter, which the signal must reach")
		assert.Zero(t, c.Waiters())
	})
}

// TestCondWakeupReachesWaitGivingUpTicket: a wait takes its ticket as a
// waiter queues, so it gives the ticket up to queue behind that waiter.
// A Signal or Broadcast made after it took the ticket, while it is between
// giving it up and queueing, finds it as it would have found the ticket:
// a Signal wakes the queued waiter first (it waited longer), then this
// wait; a Broadcast wakes both.
func TestCondWakeupReachesWaitGivingUpTicket(t *testing.T) {
	skipWithoutTickets(t)
	for _, tc := range []struct {
		name             string
		broadcast, leave bool // leave: the queued waiter leaves first
	}{
		{"Signal", false, false},
		{"Signal after the queued waiter left", false, true},
		{"Broadcast", true, false},
		{"Broadcast after the queued waiter left", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := new(freeLocker)
			c := condvar.New(l)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			queued := make(chan error, 1)
			onFirstTicket(t, false, func() {
				go func() { queued <- c.WaitContext(ctx) }()
				testutil.WaitFor(t, "queued waiter queued", func() bool { return c.Waiters() == 1 })
			})
			moving := make(chan struct{})
			t.Cleanup(condvar.SetMovedHook(func(c *condvar.Cond) {
				defer close(moving)
				if tc.leave {
					cancel()
					assert.ErrorIs(t, testutil.Await(t, queued, "queued waiter"), context.Canceled)
				}
				if !assert.Equal(t, 1+btoi(!tc.leave), c.Waiters(), "the wait giving up its ticket counts") {
					return
				}
				if tc.broadcast {
					c.Broadcast()
				} else {
					c.Signal()
				}
				if !tc.leave {
					assert.NoError(t, testutil.Await(t, queued, "queued waiter, which waited longest"))
				}
				want := 0
				if !tc.broadcast && !tc.leave {
					want = 1 // the Signal went to the queued waiter
				}
				assert.Equal(t, want, c.Waiters())
			}))
			woke := make(chan bool, 1)
			go func() { c.Wait(); woke <- true }()
			testutil.Await(t, moving, "the wait giving up its ticket")
			if !tc.broadcast && !tc.leave {
				testutil.WaitFor(t, "the wait queued", func() bool { return l.unlocks.Load() == 2 })
				assert.Equal(t, 1, c.Waiters())
				c.Signal()
			}
			testutil.Await(t, woke, "the wait giving up its ticket")
			assert.Zero(t, c.Waiters())
			assert.Zero(t, condvar.SkipLen(c))
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
