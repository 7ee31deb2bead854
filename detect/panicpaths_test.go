package detect_test

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/misuse"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// errReporter is what the failing reporters of these tests panic with.
var errReporter = errors.New("reporter failed")

// A reporterExit is how a failing reporter leaves.
type reporterExit struct {
	name string
	exit func()
}

var reporterExits = []reporterExit{
	{"panic", func() { panic(errReporter) }},
	{"Goexit", runtime.Goexit},
}

// failingReporter records every report and then leaves as exit says, for
// reports of kind k.
func failingReporter(t *testing.T, k detect.Kind, exit func()) *detecttest.Recorder {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	t.Cleanup(detect.Configure(detect.WithReporter(func(r *detect.Report) {
		rec.Add(r)
		if r.Kind == k {
			exit()
		}
	})))
	return rec
}

// TestOrderReporterFailureLeavesLockFree: in Order mode a LockOrder report
// is delivered after the lock word is taken. A reporter that panics or
// ends the goroutine (runtime.Goexit, as t.FailNow does) must not leave
// the lock held: Lock (and LockContext) that does not return leaves its
// caller without the lock, and a goroutine queued behind it is woken; no
// record of the lock stays in the goroutine's held locks (for a
// read-write lock's write lock too, whose record the engine drops only
// once the goroutine is no longer the writer).
func TestOrderReporterFailureLeavesLockFree(t *testing.T) {
	type acquire struct {
		name string
		lock func(sync.Locker)
	}
	acquires := []acquire{
		{"Lock", sync.Locker.Lock},
		{"LockContext", func(l sync.Locker) {
			err := l.(interface {
				LockContext(context.Context) error
			}).LockContext(context.Background())
			if err != nil {
				panic(err)
			}
		}},
	}
	for _, kind := range []string{"mutex", "monitor", "rwmutex", "rwmonitor"} {
		for _, acq := range acquires {
			for _, ex := range reporterExits {
				t.Run(kind+"/"+acq.name+"/"+ex.name, func(t *testing.T) {
					rec := failingReporter(t, detect.LockOrder, ex.exit)
					holding := detect.ReadStats().HoldingGs
					a, b := detecttest.Named(kind, "a"), detecttest.Named(kind, "b")
					a.Lock() // the order a -> b
					b.Lock()
					b.Unlock()
					// a stays held, so that the victim parks on it and a
					// second goroutine queues behind the victim.
					victim := testutil.Spawn(func() {
						b.Lock()
						defer b.Unlock()
						acq.lock(a) // b -> a closes the cycle
						t.Error("the acquisition that closes the cycle returned")
					})
					detecttest.WaitParked(t, a, victim.ID(t))
					next := testutil.Spawn(func() {
						a.Lock()
						a.Unlock()
					})
					detecttest.WaitParked(t, a, next.ID(t))
					a.Unlock() // to the victim, which reports
					v := victim.Wait(t)
					if ex.name == "panic" {
						assert.Equal(t, errReporter, v)
					} else {
						assert.Nil(t, v, "Goexit is not a panic")
					}
					require.Len(t, rec.All(detect.LockOrder), 1)
					require.Nil(t, next.Wait(t), "the goroutine queued behind the victim is woken")
					assert.Zero(t, detect.OwnerOf(a), "a still held after the reporter failed")
					assert.Zero(t, detect.OwnerOf(b))
					assert.Equal(t, holding, detect.ReadStats().HoldingGs, "a held-lock record left behind")
				})
			}
		}
	}
}

// TestOrderReporterFailureInCondWait: a LockOrder report made by the
// reacquire at the end of a Cond wait (the waiter holds x, taken after m,
// and retakes m), with a reporter that panics or exits. The waiter holds
// nothing of m afterwards (HoldCount 0), and each of its deferred Unlocks
// of m, one per hold the wait would have restored, accounts for a lost
// hold: with a panicking reporter each panics with an error matching both
// ErrNotOwner and the reporter's error, so recover() sees the cause; with
// Goexit they return quietly and the goroutine exits as asked. Only those
// holds are accounted for: a further Unlock is a plain misuse.
func TestOrderReporterFailureInCondWait(t *testing.T) {
	const depth = 3
	for _, ex := range reporterExits {
		t.Run(ex.name, func(t *testing.T) {
			failingReporter(t, detect.LockOrder, ex.exit)
			m := detecttest.Named("monitor", "m").(*monitor.Monitor)
			x := detecttest.Named("mutex", "x").(*mutex.Mutex)
			c := condvar.New(m)
			var holdCount int
			var owned bool
			var unlocks []any
			waiter := testutil.Spawn(func() {
				for range depth {
					m.Lock()
					defer func() { unlocks = append(unlocks, testutil.Catch(m.Unlock)) }()
				}
				x.Lock() // m -> x
				defer x.Unlock()
				defer func() { holdCount, owned = m.HoldCount(), m.Owned() }()
				c.Wait() // retakes m holding x: x -> m closes the cycle
				t.Error("Wait returned")
			})
			testutil.WaitFor(t, "waiter queued", func() bool { return c.Waiters() == 1 })
			m.Lock()
			c.Signal()
			m.Unlock()
			v := waiter.Wait(t)
			assert.Zero(t, holdCount, "HoldCount after the failed retake")
			assert.False(t, owned)
			require.Len(t, unlocks, depth)
			for i, u := range unlocks {
				if ex.name == "Goexit" {
					assert.Nil(t, u, "deferred Unlock %d during Goexit", i)
					continue
				}
				err, ok := u.(error)
				require.True(t, ok, "deferred Unlock %d panicked with %#v", i, u)
				assert.ErrorIs(t, err, monitor.ErrNotOwner)
				assert.ErrorIs(t, err, errReporter)
				var me *misuse.Error
				if assert.ErrorAs(t, err, &me) {
					assert.Equal(t, errReporter, me.Cause, "deferred Unlock %d: Cause is the reporter's panic value", i)
				}
			}
			if ex.name == "panic" {
				assert.Equal(t, errReporter, v, "the Wait's own panic")
			} else {
				assert.Nil(t, v)
			}
			assert.Zero(t, detect.OwnerOf(m))
			assert.Zero(t, detect.OwnerOf(x))

			// The holds are accounted for: the monitor works as before,
			// and a misuse by the same goroutine is a plain misuse.
			require.True(t, m.TryLock())
			assert.Equal(t, 1, m.HoldCount())
			m.Unlock()
			err, _ := testutil.Catch(m.Unlock).(error)
			require.ErrorIs(t, err, monitor.ErrNotOwner)
			assert.NotErrorIs(t, err, errReporter)
		})
	}
}

// TestCondWaitDeadlockRetry: the Lock; defer Unlock; Wait idiom, when the
// wait's reacquire is refused as a deadlock. The deferred Unlock runs on
// a lock the waiter no longer holds, and its panic is what recover() sees:
// it must match detect.ErrDeadlock (and carry the *DeadlockError), so that
// a retry loop keyed on ErrDeadlock runs again. For a Monitor held twice,
// both deferred Unlocks say so.
//
// The cycle: the waiter holds a and waits on a Cond of b; another
// goroutine takes b and parks on a; the wait is then cancelled, and its
// reacquire of b closes the cycle, registered last, so it is the one
// refused.
func TestCondWaitDeadlockRetry(t *testing.T) {
	for _, tc := range []struct {
		kind  string
		depth int
	}{{"mutex", 1}, {"monitor", 2}} {
		t.Run(tc.kind, func(t *testing.T) {
			detecttest.Configure(t, detect.WithMode(detect.Cycles))
			a := new(mutex.Mutex)
			b := detecttest.Named(tc.kind, "b")
			c := condvar.New(b)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()

			var attempts int
			var refusals []error
			var result error
			otherDone := make(chan struct{})
			waiter := testutil.Spawn(func() {
				for {
					attempts++
					err := func() (err error) {
						defer func() {
							if v := recover(); v != nil {
								if e, ok := v.(error); ok && errors.Is(e, detect.ErrDeadlock) {
									refusals = append(refusals, e)
									err = e
									return
								}
								panic(v)
							}
						}()
						a.Lock()
						defer a.Unlock()
						for range tc.depth {
							b.Lock()
							defer b.Unlock()
						}
						return c.WaitContext(ctx) // the second attempt: ctx is done, returns at once
					}()
					if !errors.Is(err, detect.ErrDeadlock) {
						result = err
						return
					}
					<-otherDone // back off until the other side is through
				}
			})
			testutil.WaitFor(t, "waiter queued", func() bool { return c.Waiters() == 1 })
			other := testutil.Spawn(func() {
				defer close(otherDone)
				b.Lock()
				defer b.Unlock()
				a.Lock()
				a.Unlock()
			})
			detecttest.WaitParked(t, a, other.ID(t))
			cancel()
			require.Nil(t, waiter.Wait(t), "the retry loop did not see the deadlock")
			require.Nil(t, other.Wait(t))
			assert.Equal(t, 2, attempts)
			assert.Equal(t, context.Canceled, result)
			require.Len(t, refusals, 1)
			de := detecttest.DeadlockError(t, refusals[0])
			assert.ErrorIs(t, refusals[0], mutex.ErrNotOwner, "still a misuse of the lock, too")
			assert.Len(t, de.Report.Steps, 2)
			assert.Zero(t, detect.OwnerOf(a))
			assert.Zero(t, detect.OwnerOf(b))
		})
	}
}

// TestWaitTimeoutReporterPanics: a wait-timeout reporter runs on the
// watchdog's timer goroutine, where a panic would end the program. It is
// recovered and written to stderr as a reporter failure, and the watchdog
// keeps running: a later wait is still reported.
func TestWaitTimeoutReporterPanics(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Cycles), detect.WithWaitTimeout(waitTimeout))
	var out syncBuffer
	defer detect.SetStderr(&out)()
	var calls atomic.Int32
	defer detect.Configure(detect.WithReporter(func(r *detect.Report) {
		rec.Add(r)
		if calls.Add(1) == 1 {
			panic(errReporter)
		}
	}))()
	twoLongWaits(t, rec)
	testutil.WaitFor(t, "reporter failure printed", func() bool {
		return strings.Contains(out.String(), "wait-timeout reporter panicked: "+errReporter.Error())
	})
	assert.Contains(t, out.String(), "goroutine", "the undelivered report is printed with the failure")
}

// syncBuffer is a bytes.Buffer safe for the watchdog's goroutine and the
// test's.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
