package stress_test

// Faults: what a panic, a goroutine that exits holding a lock, and a
// cancellation at any point of a wait do to the locks.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// liveness is the one generous deadline for what must happen eventually.
const liveness = 10 * time.Second

var errBoom = errors.New("boom")

func forEachMode(t *testing.T, f func(t *testing.T)) {
	for _, m := range []detect.Mode{detect.Off, detect.Cycles, detect.Order} {
		t.Run(m.String(), func(t *testing.T) {
			defer detect.Configure(detect.WithMode(m), detect.WithWaitTimeout(0), detect.WithReporter(func(r *detect.Report) {
				t.Errorf("unexpected detector report:\n%s", r)
			}))()
			f(t)
		})
	}
}

// catch runs f and returns what it panicked with.
func catch(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// onOther runs f on a new goroutine and waits for it.
func onOther(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	await(t, done, "goroutine")
}

func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(liveness)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("%s: nothing after %v", what, liveness)
		panic("unreachable")
	}
}

// usable checks, from another goroutine, that l is free and can be locked
// and unlocked.
func usable(t *testing.T, l interface {
	sync.Locker
	TryLock() bool
	Locked() bool
}) {
	t.Helper()
	assert.False(t, l.Locked(), "still locked")
	onOther(t, func() {
		if assert.True(t, l.TryLock(), "TryLock from another goroutine") {
			l.Unlock()
		}
	})
}

// TestFaultPanicInsideDoReleasesEverything: a panic inside Monitor.Do, with
// more locks taken under deferred Unlocks inside it, re-entry, and nested
// Do calls, unwinds to a recover that finds every lock released (the
// monitor back at the hold count it had before Do) and usable by others.
func TestFaultPanicInsideDoReleasesEverything(t *testing.T) {
	forEachMode(t, func(t *testing.T) {
		var (
			outer, inner monitor.Monitor
			mu           mutex.Mutex
		)
		outer.Lock() // a hold from before: Do must give back only its own
		v := catch(func() {
			outer.Do(func() {
				require.Equal(t, 2, outer.HoldCount())
				mu.Lock()
				defer mu.Unlock()
				inner.Lock()
				defer inner.Unlock()
				inner.Do(func() {
					outer.Do(func() {
						require.Equal(t, 3, outer.HoldCount())
						require.Equal(t, 2, inner.HoldCount())
						panic(errBoom)
					})
				})
			})
		})
		require.Equal(t, errBoom, v)
		assert.Equal(t, 1, outer.HoldCount())
		assert.Zero(t, inner.HoldCount())
		assert.False(t, mu.Owned())
		usable(t, &inner)
		usable(t, &mu)
		outer.Unlock()
		usable(t, &outer)
	})
}

// TestFaultPanicUnderDeferredUnlock: a goroutine that panics while holding
// locks taken with deferred Unlocks (including a Monitor re-entered, each
// Lock with its own defer) leaves them free and usable, once its panic is
// recovered at the top of the goroutine.
func TestFaultPanicUnderDeferredUnlock(t *testing.T) {
	forEachMode(t, func(t *testing.T) {
		var (
			mu  mutex.Mutex
			mon monitor.Monitor
		)
		// Named so that the Dump check below looks at these locks only:
		// other tests leave exited holders behind on purpose.
		detect.SetName(&mu, "deferred-unlock mutex")
		detect.SetName(&mon, "deferred-unlock monitor")
		c := mon.NewCond()
		recovered := make(chan any, 1)
		go func() {
			defer func() { recovered <- recover() }()
			mu.Lock()
			defer mu.Unlock()
			mon.Lock()
			defer mon.Unlock()
			mon.Lock()
			defer mon.Unlock()
			c.WaitTimeout(time.Nanosecond) // a wait restores both holds...
			if mon.HoldCount() != 2 {
				panic("hold count not restored")
			}
			panic(errBoom) // ...and the panic gives them back
		}()
		require.Equal(t, errBoom, await(t, recovered, "panicking goroutine"))
		usable(t, &mu)
		usable(t, &mon)
		if detect.CurrentMode() == detect.Order {
			// The detector forgot the holds too: Dump lists neither lock.
			var buf bytes.Buffer
			detect.Dump(&buf)
			assert.NotContains(t, buf.String(), "deferred-unlock", buf.String())
		}
	})
}

// goroutineID parses the calling goroutine's ID from runtime.Stack.
func goroutineID() int64 {
	var buf [64]byte
	s := string(buf[:runtime.Stack(buf[:], false)])
	s = strings.TrimPrefix(s, "goroutine ")
	id, err := strconv.ParseInt(s[:strings.IndexByte(s, ' ')], 10, 64)
	if err != nil {
		panic(err)
	}
	return id
}

// exitHolding starts a goroutine that takes the monitor twice and the
// mutex once and returns without unlocking, and returns its ID once it
// has exited.
func exitHolding(t *testing.T, mon *monitor.Monitor, mu *mutex.Mutex) int64 {
	t.Helper()
	id := make(chan int64, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		mon.Lock()
		mon.Lock()
		mu.Lock()
		id <- goroutineID()
	}()
	await(t, done, "holder")
	g := <-id
	// The goroutine has returned; wait until the runtime no longer lists it.
	deadline := time.Now().Add(liveness)
	for goroutineListed(g) {
		require.False(t, time.Now().After(deadline), "goroutine %d still listed", g)
		runtime.Gosched()
	}
	return g
}

func goroutineListed(g int64) bool {
	return strings.Contains(allStacks(), fmt.Sprintf("goroutine %d [", g))
}

func allStacks() string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestFaultExitedHolderNamedByDump: Go runs no code when a goroutine exits,
// so locks it held stay held for good (Ruby would release its Monitor).
// Dump, in Order mode, lists them under the goroutine, marked as exited,
// with their hold counts.
func TestFaultExitedHolderNamedByDump(t *testing.T) {
	defer detect.Configure(detect.WithMode(detect.Order), detect.WithWaitTimeout(0))()
	var (
		mon monitor.Monitor
		mu  mutex.Mutex
	)
	detect.SetName(&mon, "exited-holder monitor")
	detect.SetName(&mu, "exited-holder mutex")
	g := exitHolding(t, &mon, &mu)

	assert.True(t, mon.Locked())
	assert.True(t, mu.Locked())
	onOther(t, func() {
		assert.False(t, mu.TryLock(), "the mutex stays held")
		assert.False(t, mon.TryLock(), "the monitor stays held")
	})
	var buf bytes.Buffer
	detect.Dump(&buf)
	dump := buf.String()
	assert.Contains(t, dump, fmt.Sprintf("goroutine %d (exited) holds:", g), dump)
	assert.Regexp(t, `"exited-holder monitor" \(\*monitor\.Monitor 0x[0-9a-f]+\) \(hold count 2\)`, dump)
	assert.Regexp(t, `"exited-holder mutex" \(\*mutex\.Mutex 0x[0-9a-f]+\) \(hold count 1\)`, dump)
}

// TestFaultExitedHolderNamedByWaitTimeout: a goroutine blocked on a lock
// whose holder exited is reported by the wait-timeout watchdog, naming the
// holder (with no stack: it has exited), and Dump says the holder has
// exited. Nothing can release the lock, so the waiter uses LockContext and
// gives up; it returns the context's error without the lock.
func TestFaultExitedHolderNamedByWaitTimeout(t *testing.T) {
	for _, mode := range []detect.Mode{detect.Cycles, detect.Order} {
		for _, kind := range []string{"mutex", "monitor"} {
			t.Run(mode.String()+"/"+kind, func(t *testing.T) {
				reports := make(chan *detect.Report, 16)
				defer detect.Configure(detect.WithMode(mode), detect.WithWaitTimeout(20*time.Millisecond),
					detect.WithReporter(func(r *detect.Report) { reports <- r }))()
				var (
					mon monitor.Monitor
					mu  mutex.Mutex
				)
				name := "orphaned " + kind
				var l interface {
					LockContext(context.Context) error
					Owned() bool
					Locked() bool
				} = &mu
				detect.SetName(&mu, name)
				if kind == "monitor" {
					l = &mon
					detect.SetName(&mon, name)
				}
				holder := exitHolding(t, &mon, &mu)

				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				type result struct {
					err   error
					owned bool
					g     int64
				}
				res := make(chan result, 1)
				waiterID := make(chan int64, 1)
				go func() {
					waiterID <- goroutineID()
					err := l.LockContext(ctx)
					res <- result{err, l.Owned(), goroutineID()}
				}()
				waiter := <-waiterID

				r := await(t, reports, "wait-timeout report")
				require.Equal(t, detect.WaitTimeout, r.Kind, r.String())
				require.Len(t, r.Steps, 2, r.String())
				assert.Equal(t, waiter, r.Steps[0].Goroutine)
				assert.Equal(t, name, r.Steps[0].WaitsFor.Name)
				assert.Equal(t, holder, r.Steps[1].Goroutine)
				assert.Equal(t, name, r.Steps[1].Holds.Name)
				assert.Empty(t, r.Steps[1].Stack, "an exited goroutine has no stack")
				text := r.String()
				assert.Contains(t, text, fmt.Sprintf("which is held by goroutine %d", holder))
				assert.Contains(t, text, "(no stack: the goroutine has exited, or was not found)")

				var buf bytes.Buffer
				detect.Dump(&buf)
				assert.Regexp(t, regexp.MustCompile(fmt.Sprintf(`goroutine %d waiting \S+ to lock "%s" .*, held by goroutine %d, which has exited`,
					waiter, name, holder)), buf.String())

				cancel()
				got := await(t, res, "waiter")
				assert.ErrorIs(t, got.err, context.Canceled)
				assert.False(t, got.owned, "LockContext returned an error but the caller holds the lock")
				assert.True(t, l.Locked(), "still held by the exited goroutine")
				select {
				case r := <-reports:
					t.Errorf("a second report:\n%s", r)
				default:
				}
			})
		}
	}
}

// parkedOnLock reports whether goroutine g is parked in a locksmith lock's
// wait queue (its stack shows it blocked inside core.(*Lock).Acquire).
func parkedOnLock(g int64) bool {
	for _, block := range strings.Split(allStacks(), "\n\n") {
		if !strings.HasPrefix(block, fmt.Sprintf("goroutine %d [", g)) {
			continue
		}
		head := block[:strings.IndexByte(block, '\n')]
		return !strings.Contains(head, "[running]") && !strings.Contains(head, "[runnable]") &&
			strings.Contains(block, "internal/core.(*Lock).Acquire")
	}
	return false
}

func waitParked(t *testing.T, g int64) {
	t.Helper()
	deadline := time.Now().Add(liveness)
	// A stack dump costs far more than a yield: look now and then.
	for i := 0; i%32 != 0 || !parkedOnLock(g); i++ {
		require.False(t, time.Now().After(deadline), "goroutine %d never parked on the lock", g)
		runtime.Gosched()
	}
}

// ctxLock is what LockContext's tests need of a lock.
type ctxLock interface {
	sync.Locker
	LockContext(context.Context) error
	TryLock() bool
	Owned() bool
	Locked() bool
}

func ctxLocks() map[string]func() ctxLock {
	return map[string]func() ctxLock{
		"mutex":   func() ctxLock { return new(mutex.Mutex) },
		"monitor": func() ctxLock { return new(monitor.Monitor) },
	}
}

type lockResult struct {
	err   error
	owned bool
}

// lockCtxOn runs LockContext on a new goroutine; the result channel
// delivers its error and whether the goroutine then held the lock, after
// which the goroutine has released it if it held it.
func lockCtxOn(l ctxLock, ctx context.Context) (id int64, res <-chan lockResult) {
	ids := make(chan int64, 1)
	ch := make(chan lockResult, 1)
	go func() {
		ids <- goroutineID()
		err := l.LockContext(ctx)
		r := lockResult{err, l.Owned()}
		if err == nil && r.owned {
			l.Unlock()
		}
		ch <- r
	}()
	return <-ids, ch
}

// race runs cancel and act (an Unlock or a Signal, which the caller must
// make: it holds the lock) in an order that depends on round: cancel
// first, act first, or both at once, cancel from another goroutine. A
// cancellation takes effect on another goroutine anyway (context.AfterFunc,
// or the waiter noticing), so each order still races; the mix moves the
// odds.
//
// settle, if not nil, runs between cancel and act when cancel goes first:
// it waits for the cancellation to take effect, so that act certainly
// comes after it.
func race(round int, cancel, settle, act func()) {
	switch round % 3 {
	case 0:
		cancel()
		if settle != nil {
			settle()
		}
		act()
	case 1:
		act()
		cancel()
	case 2:
		start, done := make(chan struct{}), make(chan struct{})
		go func() { <-start; cancel(); close(done) }()
		close(start)
		act()
		<-done
	}
}

// TestFaultLockContextCancelledAtEveryPoint cancels LockContext before the
// call, while it is queued, and racing the Unlock that hands it the lock
// (with and without another waiter behind it), many times. A LockContext
// that returns an error never leaves the caller holding the lock, and a
// grant that reached it after it gave up goes to the next waiter or leaves
// the lock free.
func TestFaultLockContextCancelledAtEveryPoint(t *testing.T) {
	rounds := 300
	if testing.Short() {
		rounds = 50
	}
	forEachMode(t, func(t *testing.T) {
		for name, newLock := range ctxLocks() {
			t.Run(name, func(t *testing.T) {
				t.Run("before the call", func(t *testing.T) {
					l := newLock()
					ctx, cancel := context.WithCancel(context.Background())
					cancel()
					_, res := lockCtxOn(l, ctx)
					r := await(t, res, "LockContext")
					assert.ErrorIs(t, r.err, context.Canceled, "fails even though the lock is free")
					assert.False(t, r.owned)
					usable(t, l)
				})
				t.Run("while queued", func(t *testing.T) {
					l := newLock()
					l.Lock()
					ctx, cancel := context.WithCancel(context.Background())
					g, res := lockCtxOn(l, ctx)
					waitParked(t, g)
					cancel()
					r := await(t, res, "LockContext")
					assert.ErrorIs(t, r.err, context.Canceled)
					assert.False(t, r.owned)
					assert.True(t, l.Owned(), "the holder still holds it")
					l.Unlock()
					usable(t, l)
				})
				t.Run("racing the handoff", func(t *testing.T) {
					l := newLock()
					won, lost := 0, 0
					for i := range rounds {
						l.Lock()
						ctx, cancel := context.WithCancel(context.Background())
						g, res := lockCtxOn(l, ctx)
						waitParked(t, g)
						race(i, cancel, nil, l.Unlock)
						r := await(t, res, "LockContext")
						if r.err != nil {
							lost++
							require.ErrorIs(t, r.err, context.Canceled)
							require.False(t, r.owned, "LockContext returned %v but the caller holds the lock", r.err)
						} else {
							won++
							require.True(t, r.owned)
						}
						// Either way the lock is free now: a grant that
						// arrived after the cancellation was given back.
						require.False(t, l.Locked(), "left locked (LockContext returned %v)", r.err)
					}
					t.Logf("%d rounds: LockContext won %d, cancellation won %d", rounds, won, lost)
				})
				t.Run("racing the handoff with a waiter behind", func(t *testing.T) {
					l := newLock()
					for i := range rounds {
						l.Lock()
						ctx, cancel := context.WithCancel(context.Background())
						g1, res1 := lockCtxOn(l, ctx)
						waitParked(t, g1)
						g2, res2 := lockCtxOn(l, context.Background()) // never cancelled
						waitParked(t, g2)
						race(i, cancel, nil, l.Unlock)
						r1 := await(t, res1, "cancelled LockContext")
						require.True(t, r1.err == nil || errors.Is(r1.err, context.Canceled), "%v", r1.err)
						require.Equal(t, r1.err == nil, r1.owned, "LockContext returned %v", r1.err)
						// The second waiter gets the lock in any case: a grant
						// that reached the first after it gave up is passed on.
						r2 := await(t, res2, "second waiter")
						require.NoError(t, r2.err)
						require.True(t, r2.owned)
						require.False(t, l.Locked())
					}
				})
			})
		}
	})
}

// condLock is a lock kind for the WaitContext tests, with how many holds
// a waiter takes (a Monitor is re-entered, to check the count comes back).
type condLock struct {
	l     sync.Locker
	holds int
	check func(t *testing.T, holds int) // on the waiter, after a wait: it holds the lock holds times
}

func condLocks() map[string]func() condLock {
	return map[string]func() condLock{
		"sync.Mutex": func() condLock {
			return condLock{l: new(sync.Mutex), holds: 1, check: func(_ *testing.T, _ int) {}}
		},
		"mutex.Mutex": func() condLock {
			m := new(mutex.Mutex)
			return condLock{l: m, holds: 1, check: func(t *testing.T, _ int) { assert.True(t, m.Owned(), "not held after the wait") }}
		},
		"monitor.Monitor": func() condLock {
			m := new(monitor.Monitor)
			return condLock{l: m, holds: 2, check: func(t *testing.T, holds int) { assert.Equal(t, holds, m.HoldCount()) }}
		},
	}
}

// waitCtxOn starts a goroutine that takes cl's lock, waits on c with ctx,
// checks it holds the lock again as before, and unlocks; the channel
// delivers WaitContext's result. It returns once the goroutine is queued
// on c (c has want waiters).
func waitCtxOn(t *testing.T, cl condLock, c *condvar.Cond, ctx context.Context, want int) <-chan error {
	t.Helper()
	res := make(chan error, 1)
	go func() {
		for range cl.holds {
			cl.l.Lock()
		}
		err := c.WaitContext(ctx)
		cl.check(t, cl.holds)
		for range cl.holds {
			cl.l.Unlock()
		}
		res <- err
	}()
	deadline := time.Now().Add(liveness)
	for c.Waiters() != want {
		require.False(t, time.Now().After(deadline), "waiter never queued")
		runtime.Gosched()
	}
	return res
}

// TestFaultWaitContextCancelledAtEveryPoint cancels WaitContext before the
// call, while it waits, and racing the Signal that wakes it, with a second
// waiter behind it, many times. Whatever wins, the waiter returns holding
// the lock as it held it before, and the Signal is not lost: it woke
// either the cancelled waiter (which then returns nil) or the next.
func TestFaultWaitContextCancelledAtEveryPoint(t *testing.T) {
	rounds := 300
	if testing.Short() {
		rounds = 50
	}
	forEachMode(t, func(t *testing.T) {
		for name, newLock := range condLocks() {
			t.Run(name, func(t *testing.T) {
				t.Run("before the call", func(t *testing.T) {
					cl := newLock()
					c := condvar.New(cl.l)
					ctx, cancel := context.WithCancel(context.Background())
					cancel()
					onOther(t, func() {
						for range cl.holds {
							cl.l.Lock()
						}
						assert.ErrorIs(t, c.WaitContext(ctx), context.Canceled)
						cl.check(t, cl.holds)
						for range cl.holds {
							cl.l.Unlock()
						}
					})
				})
				t.Run("while waiting", func(t *testing.T) {
					cl := newLock()
					c := condvar.New(cl.l)
					ctx, cancel := context.WithCancel(context.Background())
					res := waitCtxOn(t, cl, c, ctx, 1)
					cancel()
					assert.ErrorIs(t, await(t, res, "WaitContext"), context.Canceled)
					assert.Zero(t, c.Waiters())
				})
				t.Run("racing Signal", func(t *testing.T) {
					cl := newLock()
					c := condvar.New(cl.l)
					signalled, cancelled := 0, 0
					for i := range rounds {
						ctx, cancel := context.WithCancel(context.Background())
						first := waitCtxOn(t, cl, c, ctx, 1)
						second := waitCtxOn(t, cl, c, context.Background(), 2)
						cl.l.Lock()
						race(i, cancel, func() {
							// The cancelled waiter leaves the queue on its own.
							deadline := time.Now().Add(liveness)
							for c.Waiters() != 1 {
								require.False(t, time.Now().After(deadline), "the cancelled waiter never left")
								runtime.Gosched()
							}
						}, c.Signal)
						cl.l.Unlock()
						err := await(t, first, "cancelled WaitContext")
						if err == nil {
							// The Signal chose it: the second still waits.
							signalled++
							require.Equal(t, 1, c.Waiters())
							cl.l.Lock()
							c.Signal()
							cl.l.Unlock()
						} else {
							// The cancellation won: the Signal went to the second.
							cancelled++
							require.ErrorIs(t, err, context.Canceled)
						}
						require.NoError(t, await(t, second, "second waiter"))
						require.Zero(t, c.Waiters())
					}
					t.Logf("%d rounds: Signal won %d, cancellation won %d", rounds, signalled, cancelled)
				})
			})
		}
	})
}
