package condvar_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/misuse"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// copyOf copies c behind go vet's back (vet's copylocks check catches a
// plain assignment).
func copyOf(c *condvar.Cond) *condvar.Cond {
	cp := reflect.New(reflect.TypeFor[condvar.Cond]())
	cp.Elem().Set(reflect.ValueOf(c).Elem())
	return cp.Interface().(*condvar.Cond)
}

// TestCondContractPanics: every broken contract of a Cond panics with an
// error matching its documented sentinel and a "condvar: " message, and
// leaves what it touched usable.
func TestCondContractPanics(t *testing.T) {
	sentinels := []error{condvar.ErrNilLocker, condvar.ErrCopied, condvar.ErrLockerChanged, condvar.ErrNilContext, condvar.ErrNotOwner}
	// The methods that bind a Cond to its L (and check L).
	binding := map[string]func(*condvar.Cond){
		"Wait":        (*condvar.Cond).Wait,
		"WaitTimeout": func(c *condvar.Cond) { c.WaitTimeout(time.Hour) },
		"WaitContext": func(c *condvar.Cond) { _ = c.WaitContext(context.Background()) },
		"WaitWhile":   func(c *condvar.Cond) { c.WaitWhile(func() bool { return false }) },
		"WaitUntil":   func(c *condvar.Cond) { c.WaitUntil(func() bool { return true }) },
		"Locker":      func(c *condvar.Cond) { c.Locker() },
	}
	// The methods that do not read L, as sync.Cond's Signal does not.
	notBinding := map[string]func(*condvar.Cond){
		"Signal":    (*condvar.Cond).Signal,
		"Broadcast": (*condvar.Cond).Broadcast,
		"Waiters":   func(c *condvar.Cond) { c.Waiters() },
	}
	type tc struct {
		name     string
		call     func()
		sentinel error
		msg      string
		after    func(t *testing.T) // checks that what was misused still works
	}
	var cases []tc
	cases = append(cases, tc{
		name: "New(nil)", call: func() { condvar.New(nil) },
		sentinel: condvar.ErrNilLocker, msg: "condvar: New with a nil Locker",
	})
	for name, m := range binding {
		var zero condvar.Cond
		cases = append(cases, tc{
			name: "zero Cond without L/" + name, call: func() { m(&zero) },
			sentinel: condvar.ErrNilLocker, msg: "condvar: Cond used with a nil L",
			after: func(t *testing.T) {
				// Nothing was bound: setting L now makes it usable.
				var mu sync.Mutex
				zero.L = &mu
				zero.Signal()
				assert.Zero(t, zero.Waiters())
			},
		})
		first := new(sync.Mutex)
		changed := &condvar.Cond{L: first}
		changed.Locker() // first use: bound to first
		changed.L = new(sync.Mutex)
		cases = append(cases, tc{
			name: "L changed after first use/" + name, call: func() { m(changed) },
			sentinel: condvar.ErrLockerChanged, msg: "condvar: L changed after first use",
			after: func(t *testing.T) {
				changed.L = first // put back: the Cond works again
				assert.Equal(t, sync.Locker(first), changed.Locker())
				assert.Zero(t, changed.Waiters())
			},
		})
	}
	for _, ms := range []map[string]func(*condvar.Cond){binding, notBinding} {
		for name, m := range ms {
			orig := condvar.New(new(mutex.Mutex))
			cases = append(cases, tc{
				name: "copied after first use/" + name, call: func() { m(copyOf(orig)) },
				sentinel: condvar.ErrCopied, msg: "condvar: Cond copied after first use",
				after: func(t *testing.T) { orig.Signal(); assert.Zero(t, orig.Waiters()) },
			})
		}
	}
	for _, k := range lockKinds() {
		l, held := k.new()
		c := condvar.New(l)
		cases = append(cases, tc{
			name: "WaitContext(nil)/" + k.name,
			call: func() {
				l.Lock()
				defer l.Unlock()
				var ctx context.Context
				_ = c.WaitContext(ctx)
			},
			sentinel: condvar.ErrNilContext, msg: "condvar: WaitContext with a nil context",
			after: func(t *testing.T) {
				if held != nil {
					assert.False(t, held())
				}
				res := queueWaiter(t, l, c, 1, func() bool { return c.WaitTimeout(testutil.Liveness) })
				c.Signal()
				assert.True(t, testutil.Await(t, res, "waiter after the misuse"))
			},
		})
	}
	// Signal, Broadcast and Waiters on a Cond not yet waited on do not
	// read L, as sync.Cond's Signal does not: with L nil or changed they
	// do nothing, and nothing is bound.
	t.Run("unbound Signal, Broadcast, Waiters", func(t *testing.T) {
		var zero condvar.Cond
		for name, m := range notBinding {
			assert.Nil(t, testutil.Catch(func() { m(&zero) }), name)
		}
		first := new(sync.Mutex)
		changed := &condvar.Cond{L: first}
		changed.Locker()
		changed.L = new(sync.Mutex)
		for name, m := range notBinding {
			assert.Nil(t, testutil.Catch(func() { m(changed) }), name)
		}
		zero.L = first // still unbound: binds now
		assert.Equal(t, sync.Locker(first), zero.Locker())
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := testutil.Catch(tc.call)
			require.NotNil(t, v, "expected a panic")
			err, ok := v.(error)
			require.Truef(t, ok, "panic value %#v is not an error", v)
			assert.ErrorIs(t, err, tc.sentinel)
			var me *misuse.Error
			if assert.ErrorAs(t, err, &me) {
				assert.Equal(t, tc.sentinel, me.Err)
			}
			for _, s := range sentinels {
				if s != tc.sentinel {
					assert.NotErrorIs(t, err, s)
				}
			}
			assert.Contains(t, err.Error(), tc.msg)
			if tc.after != nil {
				tc.after(t)
			}
		})
	}
}

// The sentinels shared with the lock packages are the same values.
func TestCondSharedSentinels(t *testing.T) {
	assert.Equal(t, mutex.ErrNilContext, condvar.ErrNilContext)
	assert.Equal(t, monitor.ErrNilContext, condvar.ErrNilContext)
	assert.Equal(t, mutex.ErrNotOwner, condvar.ErrNotOwner)
}

// A Cond made as a literal with L, or a zero Cond whose L is set before its
// first use, behaves as one made by New: it waits and signals, and it is
// owner-aware when L is.
func TestCondLiteralAndZeroValue(t *testing.T) {
	makers := map[string]func(sync.Locker) *condvar.Cond{
		"literal": func(l sync.Locker) *condvar.Cond { return &condvar.Cond{L: l} },
		"zero, L set later": func(l sync.Locker) *condvar.Cond {
			c := new(condvar.Cond)
			c.L = l // as x/net's http2 pipe does on first use
			return c
		},
	}
	for mname, mk := range makers {
		for _, k := range lockKinds() {
			t.Run(mname+"/"+k.name, func(t *testing.T) {
				l, held := k.new()
				c := mk(l)
				assert.Equal(t, l, c.Locker())
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
				l.Unlock()
				assert.True(t, testutil.Await(t, res, "Wait"))
				l.Lock()
				assert.False(t, c.WaitTimeout(time.Microsecond))
				l.Unlock()
				if k.ownerAware {
					err, _ := testutil.Catch(c.Wait).(error)
					assert.ErrorIs(t, err, condvar.ErrNotOwner, "Wait without the lock")
				}
			})
		}
	}
}

// Goroutines that use a zero Cond with L set for the first time at once
// bind it to the same lock, race-free (run with -race), and its waits and
// signals work across them.
func TestCondConcurrentFirstUse(t *testing.T) {
	for range 20 {
		l := new(mutex.Mutex)
		c := &condvar.Cond{L: l}
		var wg sync.WaitGroup
		var woken atomic.Int32
		start := make(chan struct{})
		const waiters = 4
		for range waiters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				l.Lock()
				c.Wait()
				l.Unlock()
				woken.Add(1)
			}()
		}
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				c.Signal() // without the lock, before or after the waiters queue
				_ = c.Waiters()
			}()
		}
		close(start)
		testutil.WaitFor(t, "every waiter queued", func() bool { return int(woken.Load())+c.Waiters() == waiters })
		c.Broadcast()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		testutil.Await(t, done, "waiters")
		assert.Equal(t, int32(waiters), woken.Load())
	}
}

// TestCondSignalWithoutLock: Signal and Broadcast work without the lock,
// as sync.Cond's do, on every kind of lock, also while another goroutine
// holds it (they must not block on it): the waiter is woken, and returns
// once the holder releases the lock. A monitor's Notify stays strict.
func TestCondSignalWithoutLock(t *testing.T) {
	for _, op := range []struct {
		name string
		call func(*condvar.Cond)
	}{{"Signal", (*condvar.Cond).Signal}, {"Broadcast", (*condvar.Cond).Broadcast}} {
		t.Run(op.name, func(t *testing.T) {
			forEachKind(t, func(t *testing.T, _ lockKind, l sync.Locker, held func() bool, c *condvar.Cond) {
				t.Run("lock free", func(t *testing.T) {
					res := queueWaiter(t, l, c, 1, func() bool { return c.WaitTimeout(testutil.Liveness) })
					v, _ := testutil.OnOther(t, func() { op.call(c) })
					require.Nil(t, v)
					assert.Zero(t, c.Waiters())
					assert.True(t, testutil.Await(t, res, "waiter"))
				})
				t.Run("lock held by another goroutine", func(t *testing.T) {
					res := queueWaiter(t, l, c, 1, func() bool {
						return c.WaitTimeout(testutil.Liveness) && (held == nil || held())
					})
					l.Lock()
					v, _ := testutil.OnOther(t, func() { op.call(c) }) // returns while l is held
					require.Nil(t, v)
					assert.Zero(t, c.Waiters(), "the waiter was not chosen")
					l.Unlock()
					assert.True(t, testutil.Await(t, res, "waiter"))
				})
			})
		})
	}
	var m monitor.Monitor
	err, _ := testutil.Catch(m.Notify).(error)
	assert.ErrorIs(t, err, monitor.ErrNotOwner, "Notify without the monitor")
	err, _ = testutil.Catch(m.NotifyAll).(error)
	assert.ErrorIs(t, err, monitor.ErrNotOwner, "NotifyAll without the monitor")
}

// timeoutPanicker is a lock whose Unlock, once armed, waits until the
// wait that called it has been decided by its own timeout (the Cond counts
// only the other waiters), and then panics without unlocking.
type timeoutPanicker struct {
	sync.Locker
	t     *testing.T
	c     *condvar.Cond
	armed bool // guarded by the lock
	want  int
}

func (p *timeoutPanicker) Unlock() {
	if p.armed {
		p.armed = false
		testutil.WaitFor(p.t, "the wait's own timeout", func() bool { return p.c.Waiters() == p.want })
		panic("timeoutPanicker: Unlock")
	}
	p.Locker.Unlock()
}

// ownedTimeoutPanicker is a timeoutPanicker that can tell its owner.
type ownedTimeoutPanicker struct {
	*timeoutPanicker
	m *mutex.Mutex
}

func (o ownedTimeoutPanicker) Owned() bool { return o.m.Owned() }

// TestCondNoPhantomSignalAfterSetUpPanic: a wait's set-up panics (the
// lock's Unlock) after the wait's own timeout has already decided it.
// Nobody signalled it, so nothing may be passed on: the other waiter must
// go on waiting, and its WaitTimeout must not report a signal.
func TestCondNoPhantomSignalAfterSetUpPanic(t *testing.T) {
	for _, tc := range []struct {
		name string
		new  func(t *testing.T) (sync.Locker, *timeoutPanicker, func() bool)
	}{
		{"sync.Mutex", func(t *testing.T) (sync.Locker, *timeoutPanicker, func() bool) {
			p := &timeoutPanicker{Locker: new(sync.Mutex), t: t}
			return p, p, nil
		}},
		{"owner-aware Locker", func(t *testing.T) (sync.Locker, *timeoutPanicker, func() bool) {
			m := new(mutex.Mutex)
			p := &timeoutPanicker{Locker: m, t: t}
			return ownedTimeoutPanicker{p, m}, p, m.Owned
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, p, held := tc.new(t)
			c := condvar.New(l)
			p.c = c
			other := queueWaiter(t, l, c, 1, func() bool { return c.WaitTimeout(testutil.Liveness) })
			l.Lock()
			p.armed, p.want = true, 1
			v := testutil.Catch(func() { c.WaitTimeout(time.Nanosecond) })
			assert.Equal(t, "timeoutPanicker: Unlock", v)
			if held != nil {
				assert.True(t, held(), "the Unlock panicked before unlocking")
			}
			assert.Equal(t, 1, c.Waiters(), "the other waiter was woken by a signal nobody sent")
			c.Signal()
			l.Unlock()
			assert.True(t, testutil.Await(t, other, "the other waiter"))
			assert.Zero(t, c.Waiters())
		})
	}
}

// gatedLocker is a user's owner-aware lock over a mutex.Mutex whose Lock,
// called by goroutine gateFor, first waits for gate.
type gatedLocker struct {
	*mutex.Mutex
	gateFor atomic.Int64
	gate    func()
}

func (g *gatedLocker) Lock() {
	if id := g.gateFor.Load(); id != 0 && id == testutil.GoroutineID() {
		g.gate()
	}
	g.Mutex.Lock()
}

// TestCondSignalPassedOnWhenReacquireRefused: a Signal chooses a waiter
// whose reacquire is then refused by deadlock detection (it holds a, which
// the signaller is now waiting for, and retakes b, which the signaller
// holds). Wait panics with the deadlock, and the signal must go to the
// next waiter, which otherwise would wait for good.
func TestCondSignalPassedOnWhenReacquireRefused(t *testing.T) {
	defer detect.Configure(detect.WithMode(detect.Cycles), detect.WithWaitTimeout(0), detect.WithReporter(func(*detect.Report) {}))()
	a := new(mutex.Mutex)
	b := &gatedLocker{Mutex: new(mutex.Mutex)}
	c := condvar.New(b)
	// The refused waiter retakes b only once the signaller is registered
	// as blocked on a: its own check then finds the cycle, and it is the
	// one refused (the last to block).
	b.gate = func() {
		testutil.WaitFor(t, "signaller blocked on a", func() bool { return len(detecttest.BlockedOn(a)) == 1 })
	}
	refused := make(chan any, 1)
	go func() {
		defer func() { refused <- recover() }()
		a.Lock()
		defer a.Unlock()
		b.Lock()
		b.gateFor.Store(testutil.GoroutineID())
		c.Wait()
		t.Error("Wait returned")
	}()
	testutil.WaitFor(t, "first waiter queued", func() bool { return c.Waiters() == 1 })
	next := queueWaiter(t, b, c, 2, func() bool { return c.WaitTimeout(testutil.Liveness) })
	signaller := make(chan struct{})
	go func() {
		defer close(signaller)
		b.Lock()
		defer b.Unlock()
		c.Signal() // to the first waiter
		a.Lock()
		a.Unlock()
	}()
	v := testutil.Await(t, refused, "refused waiter")
	err, _ := v.(error)
	require.ErrorIs(t, err, detect.ErrDeadlock)
	if !assert.Zero(t, c.Waiters(), "the signal was not passed on") {
		c.Signal() // let the test end
	}
	assert.True(t, testutil.Await(t, next, "next waiter"))
	testutil.Await(t, signaller, "signaller")
	assert.False(t, a.Locked())
	assert.False(t, b.Locked())
	var de *detect.DeadlockError
	assert.True(t, errors.As(err, &de))
}
