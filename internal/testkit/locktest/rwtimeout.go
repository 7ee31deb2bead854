package locktest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// TimedRWLock is the method set that mutex.RWMutex and monitor.RWMonitor
// share for the timed read-write suites.
type TimedRWLock interface {
	TimedLock
	RLock()
	RUnlock()
	TryRLock() bool
	RLockTimeout(time.Duration) bool
	ReadOwned() bool
	Readers() int
}

// RWLock describes a TimedRWLock for the suites.
type RWLock struct {
	Name     string // "rwmutex", "rwmonitor": in messages
	New      func() TimedRWLock
	Queues   func(TimedRWLock) (writers, readers int)
	Draining func(TimedRWLock) bool // a writer waits for the readers to leave
}

// rlockTimeoutOn runs rw.RLockTimeout(d) on a new goroutine, which
// reports whether it returned true and whether it then held rw for
// reading, and unlocks rw if it did.
func rlockTimeoutOn(rw TimedRWLock, d time.Duration) <-chan [2]bool {
	res := make(chan [2]bool, 1)
	go func() {
		ok := rw.RLockTimeout(d)
		held := rw.ReadOwned()
		if held {
			rw.RUnlock()
		}
		res <- [2]bool{ok, held}
	}()
	return res
}

func (c RWLock) queuedReaders(rw TimedRWLock) int {
	_, r := c.Queues(rw)
	return r
}

// RLockTimeout checks RLockTimeout's contract, and LockTimeout's while
// the writer waits for readers to leave: it waits for the writer, at most
// d; d <= 0 is TryRLock; a timed-out call leaves no queue entry and no
// read hold, and a timed-out writer leaves the readers in.
func RLockTimeout(t *testing.T, c RWLock) {
	t.Run("free", func(t *testing.T) {
		rw := c.New()
		require.True(t, rw.RLockTimeout(time.Hour))
		assert.True(t, rw.ReadOwned())
		rw.RUnlock()
		assert.Zero(t, rw.Readers())
	})

	for _, d := range []time.Duration{0, -time.Second} {
		t.Run("d<=0 is TryRLock/"+d.String(), func(t *testing.T) {
			rw := c.New()
			rw.Lock()
			r := testutil.Await(t, rlockTimeoutOn(rw, d), "RLockTimeout behind a writer")
			assert.Equal(t, [2]bool{false, false}, r, "does not wait for the writer of a %s", c.Name)
			assert.Zero(t, c.queuedReaders(rw), "a zero wait never queues")
			rw.Unlock()
			r = testutil.Await(t, rlockTimeoutOn(rw, d), "RLockTimeout on a free "+c.Name)
			assert.Equal(t, [2]bool{true, true}, r)
			rw.RLock()
			r = testutil.Await(t, rlockTimeoutOn(rw, d), "RLockTimeout beside a reader")
			assert.Equal(t, [2]bool{true, true}, r, "readers share a %s", c.Name)
			rw.RUnlock()
		})
	}

	t.Run("waits for the writer", func(t *testing.T) {
		rw := c.New()
		rw.Lock()
		res := rlockTimeoutOn(rw, testutil.Liveness)
		testutil.WaitFor(t, "RLockTimeout queued", func() bool { return c.queuedReaders(rw) == 1 })
		rw.Unlock()
		assert.Equal(t, [2]bool{true, true}, testutil.Await(t, res, "RLockTimeout"))
		testutil.WaitFor(t, "the reader gone", func() bool { return rw.Readers() == 0 })
		assert.False(t, rw.Locked())
	})

	t.Run("times out behind a writer", func(t *testing.T) {
		rw := c.New()
		rw.Lock()
		// The timeout is what is under test, not a synchronization: the
		// writer holds rw until RLockTimeout has returned.
		start := time.Now()
		r := testutil.Await(t, rlockTimeoutOn(rw, time.Millisecond), "RLockTimeout")
		assert.GreaterOrEqual(t, time.Since(start), time.Millisecond, "returned before its time")
		assert.Equal(t, [2]bool{false, false}, r)
		assert.Zero(t, c.queuedReaders(rw), "a timed-out RLockTimeout left a queue entry")
		assert.Zero(t, rw.Readers(), "a timed-out RLockTimeout left a read hold")
		assert.True(t, rw.Owned(), "the writer lost its lock")
		rw.Unlock()
		require.True(t, rw.TryRLock(), "%s usable after the timeout", c.Name)
		rw.RUnlock()
	})

	// The writer takes the writer lock at once and then waits for the
	// reader to leave: the timeout ends that second wait.
	t.Run("LockTimeout times out behind a reader", func(t *testing.T) {
		rw := c.New()
		rw.RLock()
		start := time.Now()
		res := make(chan bool, 1)
		go func() {
			ok := rw.LockTimeout(time.Millisecond)
			if ok {
				rw.Unlock()
			}
			res <- ok
		}()
		assert.False(t, testutil.Await(t, res, "LockTimeout"), "got a %s held for reading", c.Name)
		assert.GreaterOrEqual(t, time.Since(start), time.Millisecond, "returned before its time")
		assert.False(t, c.Draining(rw), "the timed-out writer still waits for readers")
		assert.False(t, rw.Locked())
		assert.True(t, rw.ReadOwned(), "the reader lost its hold")
		r := testutil.Await(t, rlockTimeoutOn(rw, 0), "a second reader")
		assert.Equal(t, [2]bool{true, true}, r, "the timed-out writer still keeps readers out")
		rw.RUnlock()
		require.True(t, rw.TryLock(), "%s usable after the timeout", c.Name)
		rw.Unlock()
	})

	// A reader queued behind a writer that waits for the readers to leave
	// is let in when that writer times out.
	t.Run("timed-out writer lets queued readers in", func(t *testing.T) {
		rw := c.New()
		rw.RLock()
		wres := make(chan bool, 1)
		giveUp := make(chan struct{})
		go func() {
			// Each round waits 1ms; rounds go on until the test has queued
			// its reader behind a draining writer, then the last times out.
			for {
				select {
				case <-giveUp:
					wres <- false
					return
				default:
				}
				if rw.LockTimeout(time.Millisecond) {
					rw.Unlock()
					wres <- true
					return
				}
			}
		}()
		// A second reader queues only while a writer holds the writer
		// lock; one not let in when that writer times out would wait for
		// good, as the writer tries again.
		testutil.WaitFor(t, "a draining writer", func() bool { return c.Draining(rw) })
		r := testutil.Await(t, rlockTimeoutOn(rw, testutil.Liveness), "the second reader")
		assert.Equal(t, [2]bool{true, true}, r, "the second reader timed out")
		close(giveUp)
		assert.False(t, testutil.Await(t, wres, "the writer"), "the writer got a %s held for reading", c.Name)
		rw.RUnlock()
		require.True(t, rw.TryLock())
		rw.Unlock()
	})
}

// RLockTimeoutAllocs: uncontended, RLockTimeout allocates nothing, nor
// does RLockTimeout(0).
func RLockTimeoutAllocs(t *testing.T, c RWLock) {
	defer detect.Configure(detect.WithMode(detect.Off))()
	rw := c.New()
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if rw.RLockTimeout(time.Second) {
			rw.RUnlock()
		}
	}), "uncontended RLockTimeout/RUnlock")
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if rw.RLockTimeout(0) {
			rw.RUnlock()
		}
	}), "RLockTimeout(0)/RUnlock")
}

// RWTimeoutCycles: with Cycles detection on, of two timed calls that would
// close a deadlock cycle through a read-write lock, one returns false at
// once, without waiting for its (liveness-long) timeout, and the detector
// reports the cycle. The cycles: a reader waiting for a writer, and a
// writer waiting for a reader to leave.
func RWTimeoutCycles(t *testing.T, c RWLock) {
	cycle := func(t *testing.T, mineFirst func(a TimedRWLock), theirs func(a TimedRWLock) bool, waiting func(a TimedRWLock) bool, mine func(b TimedRWLock) bool) {
		reports := make(chan *detect.Report, 2)
		defer detect.Configure(detect.WithMode(detect.Cycles), detect.WithWaitTimeout(0),
			detect.WithReporter(func(r *detect.Report) { reports <- r }))()
		a, b := c.New(), c.New()
		mineFirst(a)
		holdsB := make(chan struct{})
		other := make(chan bool, 1)
		go func() {
			b.Lock()
			close(holdsB)
			ok := theirs(a)
			b.Unlock()
			other <- ok
		}()
		testutil.Await(t, holdsB, "the other goroutine holding b")
		testutil.WaitFor(t, "the other goroutine waiting on a", func() bool { return waiting(a) })
		my := mine(b)
		if a.Owned() {
			a.Unlock()
		} else {
			a.RUnlock()
		}
		th := testutil.Await(t, other, "the other goroutine's timed call")
		assert.NotEqual(t, my, th, "exactly one timed call backs off (mine %v, theirs %v)", my, th)
		r := testutil.Await(t, reports, "the deadlock report")
		assert.Equal(t, detect.Deadlock, r.Kind)
		assert.False(t, a.Locked())
		assert.False(t, b.Locked())
		assert.Zero(t, a.Readers()+b.Readers())
	}
	rlockB := func(b TimedRWLock) bool {
		ok := b.RLockTimeout(testutil.Liveness)
		if ok {
			b.RUnlock()
		}
		return ok
	}
	t.Run("reader behind a writer", func(t *testing.T) {
		cycle(t, func(a TimedRWLock) { a.Lock() },
			func(a TimedRWLock) bool {
				ok := a.RLockTimeout(testutil.Liveness)
				if ok {
					a.RUnlock()
				}
				return ok
			},
			func(a TimedRWLock) bool { return c.queuedReaders(a) == 1 },
			rlockB)
	})
	t.Run("writer behind a reader", func(t *testing.T) {
		cycle(t, func(a TimedRWLock) { a.RLock() },
			func(a TimedRWLock) bool {
				ok := a.LockTimeout(testutil.Liveness)
				if ok {
					a.Unlock()
				}
				return ok
			},
			func(a TimedRWLock) bool { return c.Draining(a) },
			rlockB)
	})
}

// RWTimeoutHammer keeps the read-write exclusion and the holds right
// while goroutines mix Lock, RLock and the timed calls, whose short
// timeouts fire in every phase (queued for the writer lock, draining,
// queued as a reader, about when the lock is handed over), in every
// detection mode, with no report: a false answer holds nothing, a true
// one holds the lock in its mode, and the lock ends free.
func RWTimeoutHammer(t *testing.T, c RWLock, goroutines, iters int) {
	ForEachModeQuiet(t, func(t *testing.T) {
		rw := c.New()
		var writers, readers, timedOut atomic.Int32
		errs := make(chan error, goroutines)
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range iters {
					d := time.Duration((g+i)%5) * 3 * time.Microsecond
					write := (g+i)%3 == 0
					switch {
					case write && i%2 == 0:
						rw.Lock()
					case write:
						if !rw.LockTimeout(d) {
							if rw.Owned() {
								errs <- fmt.Errorf("LockTimeout(%v) returned false with the write lock", d)
								return
							}
							timedOut.Add(1)
							continue
						}
					case i%2 == 0:
						rw.RLock()
					default:
						if !rw.RLockTimeout(d) {
							if rw.ReadOwned() {
								errs <- fmt.Errorf("RLockTimeout(%v) returned false with a read lock", d)
								return
							}
							timedOut.Add(1)
							continue
						}
					}
					if write {
						if !rw.Owned() || writers.Add(1) != 1 || readers.Load() != 0 {
							errs <- fmt.Errorf("a writer (%v) not alone", d)
							return
						}
						writers.Add(-1)
						rw.Unlock()
					} else {
						readers.Add(1)
						if !rw.ReadOwned() || writers.Load() != 0 {
							errs <- fmt.Errorf("a reader (%v) beside a writer", d)
							return
						}
						readers.Add(-1)
						rw.RUnlock()
					}
				}
			}()
		}
		wg.Wait()
		t.Logf("%d timed calls returned false", timedOut.Load())
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		assert.False(t, rw.Locked())
		assert.Zero(t, rw.Readers())
		w, r := c.Queues(rw)
		assert.Zero(t, w+r, "queues left")
	})
}

// RWTimeoutOrder: in Order mode the timed calls record the lock order as
// the blocking ones do, unless d <= 0: such a call cannot wait, so, as
// for TryLock and TryRLock, it adds no edge into the lock it takes. Here a
// is held while b is taken by a timed call; b is then held while a is
// locked, which closes an order cycle only if the first step added a -> b.
func RWTimeoutOrder(t *testing.T, c RWLock) {
	for _, tc := range []struct {
		name string
		take func(b TimedRWLock, d time.Duration) bool
		drop func(b TimedRWLock)
	}{
		{"LockTimeout", TimedRWLock.LockTimeout, TimedRWLock.Unlock},
		{"RLockTimeout", TimedRWLock.RLockTimeout, TimedRWLock.RUnlock},
	} {
		for _, d := range []time.Duration{time.Second, 0} {
			t.Run(fmt.Sprintf("%s(%v)", tc.name, d), func(t *testing.T) {
				var mu sync.Mutex
				var kinds []detect.Kind
				defer detect.Configure(detect.WithMode(detect.Order), detect.WithWaitTimeout(0),
					detect.WithReporter(func(r *detect.Report) {
						mu.Lock()
						kinds = append(kinds, r.Kind)
						mu.Unlock()
					}))()
				a, b := c.New(), c.New()
				a.Lock()
				require.True(t, tc.take(b, d), "%s(%v) of a free %s", tc.name, d, c.Name)
				tc.drop(b)
				a.Unlock()
				b.Lock()
				a.Lock()
				a.Unlock()
				b.Unlock()
				mu.Lock()
				defer mu.Unlock()
				if d > 0 {
					assert.Equal(t, []detect.Kind{detect.LockOrder}, kinds, "b then a after a then b")
				} else {
					assert.Empty(t, kinds, "a zero wait added an order edge")
				}
			})
		}
	}
}
