package detect_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// TestDeadlockCycle builds a real cycle of n goroutines, goroutine i
// holding lock i and then locking lock i+1 (mod n), over Mutexes and
// Monitors mixed, each Monitor held at depth 3. Goroutines 0..n-2 park
// one by one; goroutine n-1 closes the cycle. It must panic at once with a
// *detect.DeadlockError, without the lock; its deferred Unlocks must free
// the others, which then all finish; exactly one Deadlock report names
// every goroutine and lock of the cycle in wait-for order.
func TestDeadlockCycle(t *testing.T) {
	for _, mode := range []detect.Mode{detect.Cycles, detect.Order} {
		for _, n := range []int{2, 3, 8} {
			for _, mix := range []string{"mutex", "monitor", "mixed"} {
				t.Run(fmt.Sprintf("%v/n=%d/%s", mode, n, mix), func(t *testing.T) {
					testDeadlockCycle(t, mode, n, mix)
				})
			}
		}
	}
}

func testDeadlockCycle(t *testing.T, mode detect.Mode, n int, mix string) {
	rec := detecttest.Configure(t, detect.WithMode(mode))
	locks := make([]sync.Locker, n)
	for i := range locks {
		kind := mix
		if mix == "mixed" {
			kind = []string{"mutex", "monitor"}[i%2]
		}
		locks[i] = detecttest.Named(kind, fmt.Sprintf("L%d", i))
	}
	depth := func(l sync.Locker) int {
		if _, ok := l.(*monitor.Monitor); ok {
			return 3
		}
		return 1
	}
	held := make(chan struct{}, n)
	next := make([]chan struct{}, n)
	procs := make([]*testutil.Proc, n)
	for i := range procs {
		next[i] = make(chan struct{})
		mine, want := locks[i], locks[(i+1)%n]
		procs[i] = testutil.Spawn(func() {
			defer detecttest.Hold(mine, depth(mine))()
			held <- struct{}{}
			<-next[i]
			defer func() {
				if v := recover(); v != nil {
					// The lock that would have closed the cycle is not held.
					assert.NotEqual(t, testutil.GoroutineID(), detect.OwnerOf(want))
					panic(v)
				}
			}()
			want.Lock()
			want.Unlock()
		})
	}
	for range n {
		testutil.Await(t, held, "goroutine holding its lock")
	}
	for i := 0; i < n-1; i++ {
		close(next[i])
		detecttest.WaitParked(t, locks[i+1], procs[i].ID(t))
	}
	close(next[n-1])

	de := detecttest.DeadlockError(t, procs[n-1].Wait(t))
	for i := 0; i < n-1; i++ {
		require.Nil(t, procs[i].Wait(t), "goroutine %d", i)
	}

	reps := rec.All()
	require.Len(t, reps, 1, "%s", rec)
	r := reps[0]
	require.Same(t, r, de.Report, "the panic carries the delivered report")
	require.Equal(t, detect.Deadlock, r.Kind)
	require.Len(t, r.Steps, n)
	// The closing goroutine first, then along the wait-for chain.
	for k, s := range r.Steps {
		g := (n - 1 + k) % n // the goroutine of step k
		assert.Equal(t, procs[g].G, s.Goroutine, "step %d", k)
		assert.Equal(t, fmt.Sprintf("L%d", (g+1)%n), detecttest.LockName(s.WaitsFor), "step %d waits for", k)
		assert.Equal(t, fmt.Sprintf("L%d", g), detecttest.LockName(s.Holds), "step %d holds", k)
		_, ok := detecttest.OwnFrame(s.Stack, ownPrefix)
		assert.True(t, ok, "step %d stack %v shows the test's frames", k, s.Stack)
	}
	assert.Contains(t, de.Error(), fmt.Sprintf("goroutine %d waits for L0 held by goroutine %d", procs[n-1].G, procs[0].G))
	for _, l := range locks {
		assert.Zero(t, detect.OwnerOf(l), "every lock is free again")
	}
}

// TestDeadlockMonitorDepth3 closes a two-goroutine cycle through a
// Monitor that its holder has entered three times, with a Mutex on the
// other side, once with the Monitor's holder closing the cycle (by locking
// the Mutex) and once with it parked (the Mutex's holder closes the cycle
// by locking the Monitor: that is not re-entry, since it does not hold
// it). The closer panics with its holds untouched; its deferred Unlocks
// free the other goroutine, and the Monitor's three holds unwind exactly.
func TestDeadlockMonitorDepth3(t *testing.T) {
	for _, closerHoldsMonitor := range []bool{true, false} {
		t.Run(fmt.Sprintf("closerHoldsMonitor=%v", closerHoldsMonitor), func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(detect.Order))
			mon := detecttest.Named("monitor", "mon").(*monitor.Monitor)
			mu := detecttest.Named("mutex", "mu").(*mutex.Mutex)

			monSide := func(ready chan<- struct{}, goOn <-chan struct{}) func() {
				return func() {
					defer detecttest.Hold(mon, 3)()
					ready <- struct{}{}
					<-goOn
					defer func() {
						if v := recover(); v != nil {
							assert.Equal(t, 3, mon.HoldCount(), "holds untouched by the refused Lock")
							assert.False(t, mu.Owned())
							panic(v)
						}
					}()
					mu.Lock()
					mu.Unlock()
				}
			}
			muSide := func(ready chan<- struct{}, goOn <-chan struct{}) func() {
				return func() {
					mu.Lock()
					defer mu.Unlock()
					ready <- struct{}{}
					<-goOn
					defer func() {
						if v := recover(); v != nil {
							assert.Zero(t, mon.HoldCount())
							assert.NotEqual(t, testutil.GoroutineID(), detect.OwnerOf(mon))
							panic(v)
						}
					}()
					mon.Lock()
					mon.Unlock()
				}
			}
			ready := make(chan struct{}, 2)
			goParked, goCloser := make(chan struct{}), make(chan struct{})
			var parked, closer *testutil.Proc
			var parkedOn sync.Locker
			if closerHoldsMonitor {
				parked, closer, parkedOn = testutil.Spawn(muSide(ready, goParked)), testutil.Spawn(monSide(ready, goCloser)), mon
			} else {
				parked, closer, parkedOn = testutil.Spawn(monSide(ready, goParked)), testutil.Spawn(muSide(ready, goCloser)), mu
			}
			testutil.Await(t, ready, "first lock")
			testutil.Await(t, ready, "second lock")
			close(goParked)
			detecttest.WaitParked(t, parkedOn, parked.ID(t))
			close(goCloser)

			de := detecttest.DeadlockError(t, closer.Wait(t))
			require.Nil(t, parked.Wait(t))
			require.Len(t, rec.All(), 1, "%s", rec)
			r := de.Report
			require.Len(t, r.Steps, 2)
			assert.Equal(t, closer.G, r.Steps[0].Goroutine)
			assert.Equal(t, parked.G, r.Steps[1].Goroutine)
			if closerHoldsMonitor {
				assert.Equal(t, "mon", detecttest.LockName(r.Steps[0].Holds))
				assert.Equal(t, "mu", detecttest.LockName(r.Steps[0].WaitsFor))
			} else {
				assert.Equal(t, "mu", detecttest.LockName(r.Steps[0].Holds))
				assert.Equal(t, "mon", detecttest.LockName(r.Steps[0].WaitsFor))
			}
			assert.Zero(t, detect.OwnerOf(mon))
			assert.Zero(t, detect.OwnerOf(mu))
		})
	}
}

// TestDeadlockPanicUnblocksOther: the goroutine whose Lock would close a
// cycle panics and, without recovering, unwinds through its deferred
// Unlock, which lets the other goroutine, parked in Lock, take the lock and
// finish normally. The panic then reaches the top of its goroutine (here a
// recover at the very top, standing in for a crash handler).
func TestDeadlockPanicUnblocksOther(t *testing.T) {
	detecttest.Configure(t, detect.WithMode(detect.Cycles))
	var a, b mutex.Mutex
	aHeld, bHeld := make(chan struct{}), make(chan struct{})
	victimGo := make(chan struct{})
	other := testutil.Spawn(func() {
		a.Lock()
		defer a.Unlock()
		close(aHeld)
		<-bHeld
		b.Lock() // parks until the victim's deferred Unlock
		b.Unlock()
	})
	victim := testutil.Spawn(func() {
		b.Lock()
		defer b.Unlock()
		close(bHeld)
		<-victimGo
		a.Lock() // panics: the deadlock exists now
		t.Error("Lock returned instead of panicking")
	})
	<-aHeld
	detecttest.WaitParked(t, &b, other.ID(t))
	close(victimGo)
	detecttest.DeadlockError(t, victim.Wait(t))
	require.Nil(t, other.Wait(t))
	a.Lock() // both free
	b.Lock()
	b.Unlock()
	a.Unlock()
}

// halfCycle builds the first half of a two-lock cycle: the calling
// goroutine holds b, and another goroutine holds a and is parked in
// b.Lock. The caller's Lock of a then closes the cycle. Once the caller
// unlocks b, the other goroutine takes it, releases both and ends: wait
// for it with the returned Proc.
func halfCycle(t *testing.T, a, b sync.Locker) *testutil.Proc {
	t.Helper()
	aHeld := make(chan struct{})
	b.Lock()
	other := testutil.Spawn(func() {
		a.Lock()
		defer a.Unlock()
		close(aHeld)
		b.Lock()
		b.Unlock()
	})
	<-aHeld
	detecttest.WaitParked(t, b, other.ID(t))
	return other
}

// TestDeadlockLockContext: LockContext returns the *detect.DeadlockError
// instead of panicking, without the lock; the caller backs off (releases
// what it holds), the other goroutine completes, and the retry succeeds.
// The same deadlock formed a second time is not reported again (each
// distinct cycle is reported once) but still refused.
func TestDeadlockLockContext(t *testing.T) {
	for _, kind := range []string{"mutex", "monitor"} {
		t.Run(kind, func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(detect.Cycles))
			a := detecttest.Named(kind, "a")
			b := detecttest.Named(kind, "b")
			lockCtx := func(l sync.Locker) error {
				return l.(interface {
					LockContext(context.Context) error
				}).LockContext(context.Background())
			}
			type owned interface{ Owned() bool }
			for round := range 2 {
				other := halfCycle(t, a, b)
				err := lockCtx(a)
				de := detecttest.DeadlockError(t, err)
				assert.False(t, a.(owned).Owned(), "LockContext failed without the lock")
				assert.Equal(t, testutil.GoroutineID(), de.Report.Steps[0].Goroutine)
				b.Unlock() // back off
				require.Nil(t, other.Wait(t))
				// Retry: nothing stands in the way now.
				b.Lock()
				require.NoError(t, lockCtx(a))
				a.Unlock()
				b.Unlock()
				require.Len(t, rec.All(), 1, "round %d: one report for the one cycle\n%s", round, rec)
			}
		})
	}
}

// gatedLocker is a user's owner-aware Locker around a Mutex, whose Lock
// first waits on a gate. A Cond bound to it retakes the Mutex through
// that Lock after Wait, so the test decides when the reacquire starts.
type gatedLocker struct {
	*mutex.Mutex
	gate chan struct{}
}

func (g gatedLocker) Lock() {
	<-g.gate
	g.Mutex.Lock()
}

// TestDeadlockCondReacquire: a goroutine waiting in Cond.Wait holds
// nothing of the Cond's lock and takes no part in wait-for edges; its
// reacquire after wake-up is checked like any Lock, and when it would
// close a cycle, Wait panics with the *detect.DeadlockError without
// holding the lock.
//
// The waiter W holds x, locks m and waits. B takes m (possible only
// because W's Wait released it), signals, and locks x: it parks, since W
// holds x, with no cycle (W waits on the Cond, not on a lock). Then W's
// reacquire of m (held by B, which waits for x, held by W) closes the
// cycle: W panics out of Wait, its deferred x.Unlock frees B.
func TestDeadlockCondReacquire(t *testing.T) {
	for _, mode := range []detect.Mode{detect.Cycles, detect.Order} {
		t.Run(mode.String(), func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(mode))
			m := detecttest.Named("mutex", "m").(*mutex.Mutex)
			x := detecttest.Named("mutex", "x").(*mutex.Mutex)
			gl := gatedLocker{m, make(chan struct{}, 1)}
			c := condvar.New(gl)
			gl.gate <- struct{}{} // the first Lock goes through
			waiting := make(chan struct{})
			w := testutil.Spawn(func() {
				x.Lock()
				defer x.Unlock()
				gl.Lock()
				close(waiting)
				defer func() {
					v := recover()
					assert.False(t, m.Owned(), "Wait panicked without holding the lock")
					if v == nil {
						m.Unlock()
					}
					panic(v)
				}()
				c.Wait()
			})
			<-waiting
			b := testutil.Spawn(func() {
				m.Lock() // free: W's Wait released it
				defer m.Unlock()
				c.Signal()
				x.Lock() // parks: W holds x
				x.Unlock()
			})
			detecttest.WaitParked(t, x, b.ID(t))
			assert.Zero(t, c.Waiters(), "W was signalled")
			gl.gate <- struct{}{} // let W's reacquire start
			de := detecttest.DeadlockError(t, w.Wait(t))
			require.Nil(t, b.Wait(t))
			require.Len(t, rec.All(detect.Deadlock), 1, "%s", rec)
			if mode == detect.Order {
				// Once freed, B took x while holding m, and W had taken m
				// while holding x: a real inversion, reported as such.
				require.Len(t, rec.All(detect.LockOrder), 1, "%s", rec)
			}
			r := de.Report
			require.Len(t, r.Steps, 2)
			assert.Equal(t, w.G, r.Steps[0].Goroutine)
			assert.Equal(t, "m", detecttest.LockName(r.Steps[0].WaitsFor))
			assert.Equal(t, "x", detecttest.LockName(r.Steps[0].Holds))
			assert.Equal(t, b.G, r.Steps[1].Goroutine)
			assert.Zero(t, detect.OwnerOf(m))
			assert.Zero(t, detect.OwnerOf(x))
		})
	}
}

// TestDeadlockMonitorWaitReacquire is the same with a Monitor's implicit
// condition, entered three times: WaitContext releases all three holds
// (so another goroutine can take the Monitor), and the reacquire after
// cancellation closes the cycle; it panics without holding the Monitor
// (hold count 0), and the other goroutine gets the Monitor afterwards.
func TestDeadlockMonitorWaitReacquire(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	mon := detecttest.Named("monitor", "mon").(*monitor.Monitor)
	x := detecttest.Named("mutex", "x").(*mutex.Mutex)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waiting := make(chan struct{})
	w := testutil.Spawn(func() {
		x.Lock()
		defer x.Unlock()
		release := detecttest.Hold(mon, 3)
		close(waiting)
		defer func() {
			v := recover()
			assert.Zero(t, mon.HoldCount(), "WaitContext panicked without holding the monitor")
			if v == nil {
				release()
			}
			panic(v)
		}()
		_ = mon.WaitContext(ctx)
	})
	<-waiting
	b := testutil.Spawn(func() {
		mon.Lock() // free: W's wait released every hold
		defer mon.Unlock()
		x.Lock() // parks: W holds x
		x.Unlock()
	})
	detecttest.WaitParked(t, x, b.ID(t))
	cancel() // W retakes mon: the cycle closes
	de := detecttest.DeadlockError(t, w.Wait(t))
	require.Nil(t, b.Wait(t))
	require.Len(t, rec.All(detect.Deadlock), 1, "%s", rec)
	assert.Equal(t, "mon", detecttest.LockName(de.Report.Steps[0].WaitsFor))
	assert.Zero(t, detect.OwnerOf(mon))
}

// TestNoReportForReentry: re-entering a Monitor, by Lock, TryLock or
// LockContext, never blocks and is never a report, in any mode, also while
// other goroutines wait for the Monitor and while the owner holds other
// locks taken after it.
func TestNoReportForReentry(t *testing.T) {
	for _, mode := range []detect.Mode{detect.Off, detect.Cycles, detect.Order} {
		t.Run(mode.String(), func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(mode), detect.WithWaitTimeout(0))
			mon := detecttest.Named("monitor", "mon").(*monitor.Monitor)
			x := detecttest.Named("mutex", "x").(*mutex.Mutex)
			mon.Lock()
			waiter := testutil.Spawn(func() {
				mon.Lock()
				mon.Unlock()
			})
			if mode != detect.Off {
				detecttest.WaitParked(t, mon, waiter.ID(t))
			}
			x.Lock()
			mon.Lock() // re-entry while holding x, taken after mon
			require.True(t, mon.TryLock())
			require.NoError(t, mon.LockContext(context.Background()))
			require.Equal(t, 4, mon.HoldCount())
			for range 3 {
				mon.Unlock()
			}
			x.Unlock()
			mon.Unlock()
			require.Nil(t, waiter.Wait(t))
			assert.Empty(t, rec.All(), "%s", rec)
			if mode == detect.Order {
				assert.True(t, detect.HasEdge(mon, x))
				assert.False(t, detect.HasEdge(x, mon), "re-entry is never an edge")
			}
		})
	}
}

// TestDeadlockOneVictim: when the two goroutines of a cycle park at the
// same moment, each may register before the other walks, and then both
// see the cycle and both are refused: two victims where one suffices (the
// contract: "the goroutine that would close the cycle panics", as a
// database aborts one transaction). core.checkCycle refuses only the
// goroutine with the largest registration epoch; without that rule two
// victims showed about once in 2000 rounds, 15 in 2000 under -race.
func TestDeadlockOneVictim(t *testing.T) {
	detecttest.Configure(t, detect.WithMode(detect.Cycles))
	both := 0
	for range 3000 {
		var a, b mutex.Mutex
		var ready sync.WaitGroup
		ready.Add(2)
		var victims atomic.Int32
		run := func(x, y *mutex.Mutex) func() {
			return func() {
				x.Lock()
				defer x.Unlock()
				ready.Done()
				ready.Wait()
				if testutil.Catch(y.Lock) != nil {
					victims.Add(1)
					return
				}
				y.Unlock()
			}
		}
		p, q := testutil.Spawn(run(&a, &b)), testutil.Spawn(run(&b, &a))
		p.Wait(t)
		q.Wait(t)
		if victims.Load() == 2 {
			both++
		}
	}
	assert.Zero(t, both, "rounds with two victims of one cycle")
}

// TestDeadlockReporterPanics: a reporter that panics (or calls
// runtime.Goexit, as t.FailNow does) while a Deadlock is delivered must
// not leave the refused waiter queued: the next Release would "wake" it
// (setting the woken flag, which nobody then clears), and every later
// waiter on that lock would sleep for ever. core.Acquire leaves the queue
// before it asks the engine for the report.
func TestDeadlockReporterPanics(t *testing.T) {
	detecttest.Configure(t, detect.WithMode(detect.Cycles))
	defer detect.Configure(detect.WithReporter(func(*detect.Report) { panic("reporter") }))()
	var a, b mutex.Mutex
	other := halfCycle(t, &a, &b)
	assert.Equal(t, "reporter", testutil.Catch(a.Lock))
	b.Unlock()
	require.Nil(t, other.Wait(t))
	// a is free; contend on it: the waiter must be woken.
	a.Lock()
	w := testutil.Spawn(func() {
		a.Lock()
		a.Unlock()
	})
	detecttest.WaitParked(t, &a, w.ID(t))
	a.Unlock()
	require.Nil(t, w.Wait(t), "the waiter is woken")
}

// TestCyclesSeesGoroutineParkedWhileOff: a goroutine that parked while
// detection was Off, and is still parked when Cycles mode is turned on, is
// part of the wait-for graph: a Lock that would close a cycle through it
// is refused.
func TestCyclesSeesGoroutineParkedWhileOff(t *testing.T) {
	restoreOff := detect.Configure(detect.WithMode(detect.Off), detect.WithWaitTimeout(0))
	defer restoreOff()
	var a, b mutex.Mutex
	b.Lock()
	aHeld := make(chan struct{})
	other := testutil.Spawn(func() {
		a.Lock()
		defer a.Unlock()
		close(aHeld)
		b.Lock() // parks while detection is off
		b.Unlock()
	})
	<-aHeld
	testutil.WaitState(t, other.ID(t), "locksmith/internal/core.(*Lock).Acquire")
	rec := detecttest.Configure(t, detect.WithMode(detect.Cycles))
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Liveness)
	defer cancel()
	de := detecttest.DeadlockError(t, a.LockContext(ctx))
	require.Len(t, de.Report.Steps, 2)
	assert.Len(t, rec.All(detect.Deadlock), 1)
	b.Unlock()
	require.Nil(t, other.Wait(t))
}
