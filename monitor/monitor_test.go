package monitor_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/internal/testkit/locktest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

var _ sync.Locker = (*monitor.Monitor)(nil)

func TestZeroMonitor(t *testing.T) {
	var m monitor.Monitor
	assert.False(t, m.Locked(), "zero Monitor is unlocked")
	assert.False(t, m.Owned())
	assert.Zero(t, m.HoldCount())

	m.Lock()
	assert.True(t, m.Locked())
	assert.True(t, m.Owned())
	assert.Equal(t, 1, m.HoldCount())
	m.Unlock()
	assert.False(t, m.Locked())
	assert.Zero(t, m.HoldCount())

	var m2 monitor.Monitor
	require.True(t, m2.TryLock(), "TryLock of a zero Monitor")
	m2.Unlock()

	var m3 monitor.Monitor
	require.NoError(t, m3.LockContext(context.Background()), "LockContext of a zero Monitor")
	m3.Unlock()

	var m4 monitor.Monitor
	ran := false
	m4.Do(func() { ran = m4.Owned() })
	assert.True(t, ran, "Do on a zero Monitor")

	// The implicit condition of a zero Monitor works too.
	var m5 monitor.Monitor
	m5.Lock()
	m5.Notify()
	m5.NotifyAll()
	assert.False(t, m5.WaitTimeout(time.Millisecond))
	assert.Equal(t, 1, m5.HoldCount())
	m5.Unlock()
	assert.False(t, m5.Locked())
}

func TestMonitorSentinels(t *testing.T) {
	assert.Same(t, monitor.ErrNotOwner, condvar.ErrNotOwner)
	assert.Same(t, monitor.ErrNotOwner, mutex.ErrNotOwner)
}

// TestMonitorReentry locks a Monitor a million times from its owner and
// unlocks it as many times, checking the hold count at each end and that
// the monitor is released only by the last Unlock.
func TestMonitorReentry(t *testing.T) {
	const depth = 1_000_000
	var m monitor.Monitor
	for range depth {
		m.Lock()
	}
	require.Equal(t, depth, m.HoldCount())
	assert.True(t, m.Owned())

	type view struct {
		locked, owned, try bool
		holds              int
	}
	look := func() view {
		ch := make(chan view)
		go func() {
			v := view{locked: m.Locked(), owned: m.Owned(), holds: m.HoldCount(), try: m.TryLock()}
			if v.try {
				m.Unlock()
			}
			ch <- v
		}()
		return testutil.Await(t, ch, "look from another goroutine")
	}
	assert.Equal(t, view{locked: true}, look(), "as seen by another goroutine at full depth")

	for range depth - 1 {
		m.Unlock()
	}
	require.Equal(t, 1, m.HoldCount())
	assert.Equal(t, view{locked: true}, look(), "as seen by another goroutine at depth 1")

	m.Unlock()
	assert.Zero(t, m.HoldCount())
	assert.False(t, m.Locked())
	assert.Equal(t, view{try: true}, look(), "as seen by another goroutine once released")

	err := testutil.MustPanicErr(t, m.Unlock)
	assert.ErrorIs(t, err, monitor.ErrNotOwner, "one Unlock too many")
}

func TestMonitorLockBlocksUntilReleased(t *testing.T) {
	var m monitor.Monitor
	m.Lock()
	m.Lock()
	got := make(chan int)
	go func() {
		m.Lock()
		got <- m.HoldCount()
		m.Unlock()
		close(got)
	}()
	testutil.WaitFor(t, "Lock queued", func() bool { return monitor.QueueLen(&m) == 1 })
	m.Unlock()
	assert.Equal(t, 1, m.HoldCount())
	select {
	case <-got:
		t.Fatal("Lock returned while the owner still had a hold")
	default:
	}
	assert.Equal(t, 1, monitor.QueueLen(&m))
	m.Unlock()
	assert.Equal(t, 1, testutil.Await(t, got, "Lock after release"), "a new owner starts at hold count 1")
	testutil.Await(t, got, "Unlock")
	assert.False(t, m.Locked())
}

// TestMonitorMisuse: Unlock and the implicit condition's methods, called
// by a goroutine that does not hold the monitor (free, or held by the test
// goroutine at depth 3), panic with an error that matches ErrNotOwner in
// all three packages' names, and change nothing.
func TestMonitorMisuse(t *testing.T) {
	expired, cancel := context.WithCancel(context.Background())
	cancel()
	for _, op := range []struct {
		name, verb string
		call       func(m *monitor.Monitor)
	}{
		{"Unlock", "unlock", (*monitor.Monitor).Unlock},
		{"Wait", "wait", (*monitor.Monitor).Wait},
		{"WaitTimeout", "wait", func(m *monitor.Monitor) { m.WaitTimeout(time.Hour) }},
		{"WaitTimeout(0)", "wait", func(m *monitor.Monitor) { m.WaitTimeout(0) }},
		{"WaitContext", "wait", func(m *monitor.Monitor) { _ = m.WaitContext(context.Background()) }},
		{"WaitContext(done)", "wait", func(m *monitor.Monitor) { _ = m.WaitContext(expired) }},
		{"Notify", "notify", (*monitor.Monitor).Notify},
		{"NotifyAll", "notify", (*monitor.Monitor).NotifyAll},
	} {
		t.Run(op.name, func(t *testing.T) {
			locktest.ForEachMode(t, func(t *testing.T) {
				t.Run("free", func(t *testing.T) {
					var m monitor.Monitor
					v, me := testutil.OnOther(t, func() { op.call(&m) })
					err := checkNotOwner(t, v)
					assert.Contains(t, err.Error(), "monitor: "+op.verb)
					assert.Contains(t, err.Error(), "unlocked monitor")
					assert.Contains(t, err.Error(), fmt.Sprintf("goroutine %d", me))
					assert.False(t, m.Locked())
					require.True(t, m.TryLock(), "monitor not usable after a misuse panic")
					m.Unlock()
				})
				t.Run("held by another goroutine", func(t *testing.T) {
					var m monitor.Monitor
					m.Lock()
					m.Lock()
					m.Lock()
					holder := testutil.GoroutineID()
					v, me := testutil.OnOther(t, func() { op.call(&m) })
					err := checkNotOwner(t, v)
					assert.Contains(t, err.Error(), fmt.Sprintf("monitor: %s by goroutine %d of monitor held by goroutine %d", op.verb, me, holder))
					assert.Equal(t, 3, m.HoldCount(), "a misuse panic changed the owner's hold count")
					for range 3 {
						m.Unlock()
					}
					assert.False(t, m.Locked())
				})
			})
		})
	}
}

func checkNotOwner(t *testing.T, v any) error {
	t.Helper()
	require.NotNil(t, v, "expected a panic")
	err, ok := v.(error)
	require.Truef(t, ok, "panic value %#v is not an error", v)
	assert.ErrorIs(t, err, monitor.ErrNotOwner)
	assert.ErrorIs(t, err, condvar.ErrNotOwner)
	assert.ErrorIs(t, err, mutex.ErrNotOwner)
	assert.NotErrorIs(t, err, mutex.ErrRecursiveLock)
	return err
}

func TestMonitorTryLock(t *testing.T) { locktest.TryLock(t, timedMonitor) }

func TestMonitorLockContext(t *testing.T) { locktest.LockContext(t, timedMonitor) }

func TestMonitorLockContextCancelRacesUnlock(t *testing.T) {
	locktest.LockContextCancelRacesUnlock(t, timedMonitor)
}

// Re-entry cannot block, so LockContext by the owner succeeds even with a
// done context, and adds one hold.
func TestMonitorLockContextReentry(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	var m monitor.Monitor
	m.Lock()
	require.NoError(t, m.LockContext(context.Background()))
	assert.Equal(t, 2, m.HoldCount())
	require.NoError(t, m.LockContext(done))
	assert.Equal(t, 3, m.HoldCount())
	for range 3 {
		m.Unlock()
	}
	assert.False(t, m.Locked())
}

func TestMonitorDo(t *testing.T) {
	var m monitor.Monitor
	var inside, nested int
	m.Do(func() {
		inside = m.HoldCount()
		m.Do(func() { nested = m.HoldCount() })
	})
	assert.Equal(t, 1, inside)
	assert.Equal(t, 2, nested)
	assert.False(t, m.Locked())

	t.Run("panic releases and propagates", func(t *testing.T) {
		var m monitor.Monitor
		boom := errors.New("boom")
		v := testutil.Catch(func() { m.Do(func() { panic(boom) }) })
		assert.Same(t, boom, v, "the panic from fn goes on unchanged")
		assert.False(t, m.Locked(), "Do did not release the monitor after a panic")
		require.True(t, m.TryLock())
		m.Unlock()
	})

	t.Run("panic at depth 2 restores depth 2", func(t *testing.T) {
		var m monitor.Monitor
		m.Lock()
		m.Lock()
		v := testutil.Catch(func() {
			m.Do(func() {
				if m.HoldCount() == 3 {
					panic("at depth 3")
				}
			})
		})
		assert.Equal(t, "at depth 3", v)
		assert.Equal(t, 2, m.HoldCount())
		m.Unlock()
		m.Unlock()
		assert.False(t, m.Locked())
	})

	t.Run("blocks while held by another goroutine", func(t *testing.T) {
		var m monitor.Monitor
		m.Lock()
		ran := make(chan int)
		go m.Do(func() { ran <- m.HoldCount() })
		testutil.WaitFor(t, "Do queued", func() bool { return monitor.QueueLen(&m) == 1 })
		m.Unlock()
		assert.Equal(t, 1, testutil.Await(t, ran, "Do"))
		testutil.WaitFor(t, "Do released", func() bool { return !m.Locked() })
	})
}

func TestMonitorImplicitCondition(t *testing.T) {
	t.Run("Wait and Notify", func(t *testing.T) {
		var m monitor.Monitor
		ready := false // guarded by m
		done := make(chan int)
		go func() {
			m.Lock()
			for !ready {
				m.Wait()
			}
			done <- m.HoldCount()
			m.Unlock()
		}()
		m.Lock()
		ready = true
		m.Notify()
		m.Unlock()
		assert.Equal(t, 1, testutil.Await(t, done, "Wait"))
	})

	t.Run("NotifyAll", func(t *testing.T) {
		const n = 5
		var m monitor.Monitor
		waiting, gen := 0, 0 // guarded by m
		done := make(chan struct{}, n)
		for range n {
			go func() {
				m.Lock()
				defer m.Unlock()
				my := gen
				waiting++
				for gen == my {
					m.Wait()
				}
				done <- struct{}{}
			}()
		}
		testutil.WaitFor(t, "all waiting", func() bool {
			m.Lock()
			defer m.Unlock()
			return waiting == n
		})
		m.Lock()
		gen++
		m.NotifyAll()
		m.Unlock()
		for range n {
			testutil.Await(t, done, "NotifyAll")
		}
	})

	t.Run("Notify wakes one in FIFO order", func(t *testing.T) {
		const n = 5
		var m monitor.Monitor
		waiting := 0 // guarded by m
		order := make(chan int, n)
		for i := range n {
			go func() {
				m.Lock()
				defer m.Unlock()
				waiting++
				m.Wait()
				order <- i
			}()
			testutil.WaitFor(t, "waiter queued", func() bool {
				m.Lock()
				defer m.Unlock()
				return waiting == i+1
			})
		}
		for i := range n {
			m.Lock()
			m.Notify()
			m.Unlock()
			assert.Equal(t, i, testutil.Await(t, order, "Notify"))
		}
	})

	t.Run("WaitTimeout times out", func(t *testing.T) {
		var m monitor.Monitor
		m.Lock()
		assert.False(t, m.WaitTimeout(time.Millisecond))
		assert.Equal(t, 1, m.HoldCount())
		assert.False(t, m.WaitTimeout(0))
		assert.False(t, m.WaitTimeout(-time.Second))
		m.Unlock()
	})

	t.Run("WaitContext", func(t *testing.T) {
		var m monitor.Monitor
		m.Lock()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		assert.ErrorIs(t, m.WaitContext(ctx), context.Canceled, "already cancelled")
		ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		assert.ErrorIs(t, m.WaitContext(ctx), context.DeadlineExceeded)
		assert.Equal(t, 1, m.HoldCount())
		m.Unlock()
	})
}

// condAPI is a condition variable bound to a monitor: the implicit one or
// one made by NewCond.
type condAPI struct {
	wait        func()
	waitTimeout func(time.Duration) bool
	waitContext func(context.Context) error
	notify      func()
	waiters     func() int // -1 when not exposed
}

func conditions(m *monitor.Monitor) map[string]condAPI {
	c := m.NewCond()
	c2 := condvar.New(m)
	return map[string]condAPI{
		"implicit": {m.Wait, m.WaitTimeout, m.WaitContext, m.Notify, func() int { return -1 }},
		"NewCond":  {c.Wait, c.WaitTimeout, c.WaitContext, c.Signal, c.Waiters},
		"condvar":  {c2.Wait, c2.WaitTimeout, c2.WaitContext, c2.Signal, c2.Waiters},
	}
}

// TestMonitorHoldCountRestoredAfterWait waits at depth 3 in every way a
// wait can end, on the implicit condition and on Conds bound to the
// monitor, in every detection mode: during the wait another goroutine can
// take the monitor (it was released completely, and that goroutine starts
// at hold count 1), and after it the waiter holds the monitor again at
// depth 3.
func TestMonitorHoldCountRestoredAfterWait(t *testing.T) {
	type outcome struct {
		woken bool
		err   error
	}
	for _, wk := range []struct {
		name string
		// ctx returns the context for the wait.
		ctx func() (context.Context, context.CancelFunc)
		// helper runs in another goroutine holding the monitor while the
		// waiter waits (nil: no helper).
		helper func(c condAPI, cancel context.CancelFunc)
		wait   func(c condAPI, ctx context.Context) outcome
		want   outcome
	}{
		{
			name:   "Wait",
			helper: func(c condAPI, _ context.CancelFunc) { c.notify() },
			wait:   func(c condAPI, _ context.Context) outcome { c.wait(); return outcome{woken: true} },
			want:   outcome{woken: true},
		},
		{
			name:   "WaitTimeout notified",
			helper: func(c condAPI, _ context.CancelFunc) { c.notify() },
			wait:   func(c condAPI, _ context.Context) outcome { return outcome{woken: c.waitTimeout(testutil.Liveness)} },
			want:   outcome{woken: true},
		},
		{
			name:   "WaitTimeout timed out",
			helper: func(condAPI, context.CancelFunc) {},
			wait:   func(c condAPI, _ context.Context) outcome { return outcome{woken: c.waitTimeout(time.Millisecond)} },
			want:   outcome{woken: false},
		},
		{
			name: "WaitTimeout(0)",
			wait: func(c condAPI, _ context.Context) outcome { return outcome{woken: c.waitTimeout(0)} },
			want: outcome{woken: false},
		},
		{
			name:   "WaitContext notified",
			helper: func(c condAPI, _ context.CancelFunc) { c.notify() },
			wait: func(c condAPI, ctx context.Context) outcome {
				err := c.waitContext(ctx)
				return outcome{woken: err == nil, err: err}
			},
			want: outcome{woken: true},
		},
		{
			name:   "WaitContext cancelled",
			helper: func(_ condAPI, cancel context.CancelFunc) { cancel() },
			wait: func(c condAPI, ctx context.Context) outcome {
				err := c.waitContext(ctx)
				return outcome{woken: err == nil, err: err}
			},
			want: outcome{err: context.Canceled},
		},
		{
			name: "WaitContext deadline",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), time.Millisecond)
			},
			helper: func(condAPI, context.CancelFunc) {},
			wait: func(c condAPI, ctx context.Context) outcome {
				err := c.waitContext(ctx)
				return outcome{woken: err == nil, err: err}
			},
			want: outcome{err: context.DeadlineExceeded},
		},
		{
			name: "WaitContext already done",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, cancel
			},
			wait: func(c condAPI, ctx context.Context) outcome {
				err := c.waitContext(ctx)
				return outcome{woken: err == nil, err: err}
			},
			want: outcome{err: context.Canceled},
		},
	} {
		t.Run(wk.name, func(t *testing.T) {
			locktest.ForEachMode(t, func(t *testing.T) {
				for _, name := range []string{"implicit", "NewCond", "condvar"} {
					t.Run(name, func(t *testing.T) {
						var m monitor.Monitor
						c := conditions(&m)[name]
						ctx, cancel := context.WithCancel(context.Background())
						if wk.ctx != nil {
							ctx, cancel = wk.ctx()
						}
						defer cancel()
						const depth = 3
						for range depth {
							m.Lock()
						}
						helperHolds := make(chan int, 1)
						if wk.helper != nil {
							go func() {
								// Lock succeeds only once the waiter has
								// released every hold inside the wait.
								m.Lock()
								h := m.HoldCount()
								wk.helper(c, cancel)
								m.Unlock()
								helperHolds <- h
							}()
						}
						got := wk.wait(c, ctx)
						assert.Equal(t, depth, m.HoldCount(), "hold count after the wait")
						assert.True(t, m.Owned())
						assert.Equal(t, wk.want.woken, got.woken, "reported wakeup")
						if wk.want.err != nil {
							assert.ErrorIs(t, got.err, wk.want.err)
						} else {
							assert.NoError(t, got.err)
						}
						if n := c.waiters(); n != -1 {
							assert.Zero(t, n, "a finished wait left a waiter behind")
						}
						for range depth {
							m.Unlock()
						}
						if wk.helper != nil {
							assert.Equal(t, 1, testutil.Await(t, helperHolds, "helper"))
						}
						testutil.WaitFor(t, "monitor released", func() bool { return !m.Locked() })
					})
				}
			})
		})
	}
}

func TestMonitorHammer(t *testing.T) {
	ctx := context.Background()
	// Every way to enter the monitor, in rotation.
	lock := func(m *monitor.Monitor, g, i int) {
		switch (g + i) % 4 {
		case 0:
			m.Lock()
		case 1:
			if err := m.LockContext(ctx); err != nil {
				panic(err)
			}
		case 2:
			for !m.TryLock() {
				runtime.Gosched()
			}
		default:
			// Do's own hold is gone when Do returns; take one inside it
			// for the hammer's Unlock to match.
			m.Do(func() { m.Lock() })
		}
	}
	locktest.HammerSweep(t, timedMonitor, lock)
}

func TestMonitorNoAllocs(t *testing.T) {
	var m monitor.Monitor
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(100, func() { m.Lock(); m.Unlock() }), "first entry")
	m.Lock()
	assert.Zero(t, testing.AllocsPerRun(100, func() { m.Lock(); m.Unlock() }), "re-entry")
	m.Unlock()
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if m.TryLock() {
			m.Unlock()
		}
	}), "TryLock/Unlock")
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if m.LockContext(ctx) == nil {
			m.Unlock()
		}
	}), "LockContext/Unlock")
	assert.Zero(t, testing.AllocsPerRun(100, func() { m.Do(func() {}) }), "Do")
}

// TestMonitorNilContext: LockContext and WaitContext with a nil context
// panic with an error matching ErrNilContext (the same value as
// mutex.ErrNilContext and condvar.ErrNilContext), for the owner too, and
// change nothing.
func TestMonitorNilContext(t *testing.T) {
	var nilCtx context.Context
	check := func(t *testing.T, v any, msg string) {
		t.Helper()
		err, ok := v.(error)
		require.Truef(t, ok, "panic value %#v is not an error", v)
		assert.ErrorIs(t, err, monitor.ErrNilContext)
		assert.ErrorIs(t, err, mutex.ErrNilContext)
		assert.ErrorIs(t, err, condvar.ErrNilContext)
		assert.NotErrorIs(t, err, monitor.ErrNotOwner)
		assert.Contains(t, err.Error(), msg)
	}
	var m monitor.Monitor
	check(t, testutil.Catch(func() { _ = m.LockContext(nilCtx) }), "monitor: LockContext with a nil context")
	assert.False(t, m.Locked())
	m.Lock()
	m.Lock()
	check(t, testutil.Catch(func() { _ = m.LockContext(nilCtx) }), "monitor: LockContext with a nil context")
	check(t, testutil.Catch(func() { _ = m.WaitContext(nilCtx) }), "condvar: WaitContext with a nil context")
	assert.Equal(t, 2, m.HoldCount(), "a nil-context panic changed the hold count")
	m.Unlock()
	m.Unlock()
	assert.False(t, m.Locked())
}
