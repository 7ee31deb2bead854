package monitor_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/internal/testkit/locktest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
)

// nilContext is a nil context.Context, for the misuse tests.
var nilContext context.Context

var _ sync.Locker = (*monitor.RWMonitor)(nil)

// holds is what the calling goroutine holds of rw.
type holds struct{ w, r int }

func holdsOf(rw *monitor.RWMonitor) holds { return holds{rw.WriteHoldCount(), rw.ReadHoldCount()} }

func TestZeroRWMonitor(t *testing.T) {
	var rw monitor.RWMonitor
	assert.False(t, rw.Locked())
	assert.False(t, rw.Owned())
	assert.False(t, rw.ReadOwned())
	assert.Zero(t, rw.Readers())
	assert.Equal(t, holds{}, holdsOf(&rw))
	rw.Lock()
	assert.Equal(t, holds{1, 0}, holdsOf(&rw))
	rw.Unlock()
	rw.RLock()
	assert.Equal(t, holds{0, 1}, holdsOf(&rw))
	rw.RUnlock()
	for name, lock := range map[string]func(*monitor.RWMonitor) bool{
		"TryLock":      (*monitor.RWMonitor).TryLock,
		"TryRLock":     (*monitor.RWMonitor).TryRLock,
		"LockContext":  func(rw *monitor.RWMonitor) bool { return rw.LockContext(context.Background()) == nil },
		"RLockContext": func(rw *monitor.RWMonitor) bool { return rw.RLockContext(context.Background()) == nil },
	} {
		var rw monitor.RWMonitor
		require.True(t, lock(&rw), name)
		if rw.Owned() {
			rw.Unlock()
		} else {
			rw.RUnlock()
		}
		assert.False(t, rw.Locked(), name)
		assert.Zero(t, rw.Readers(), name)
	}
}

// TestRWMonitorMisuse: each broken contract panics with its sentinel and
// message and leaves the holds exactly as they were.
func TestRWMonitorMisuse(t *testing.T) {
	done := func() context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	for _, tc := range []struct {
		name     string
		before   holds
		stranger bool
		misuse   func(rw *monitor.RWMonitor)
		sentinel error
		msg      func(me, holder int64) []string
	}{
		{name: "Lock by a reader", before: holds{0, 2}, misuse: (*monitor.RWMonitor).Lock, sentinel: monitor.ErrUpgrade,
			msg: func(me, _ int64) []string {
				return []string{"monitor: ", "read-to-write upgrade", fmt.Sprintf("goroutine %d", me)}
			}},
		{name: "LockContext by a reader", before: holds{0, 1}, misuse: func(rw *monitor.RWMonitor) { _ = rw.LockContext(context.Background()) },
			sentinel: monitor.ErrUpgrade, msg: func(me, _ int64) []string { return []string{"read-to-write upgrade", fmt.Sprintf("goroutine %d", me)} }},
		{name: "LockContext with a done context by a reader", before: holds{0, 1}, misuse: func(rw *monitor.RWMonitor) { _ = rw.LockContext(done()) },
			sentinel: monitor.ErrUpgrade, msg: func(me, _ int64) []string { return []string{"read-to-write upgrade"} }},
		{name: "Unlock by a stranger", before: holds{2, 1}, stranger: true, misuse: (*monitor.RWMonitor).Unlock, sentinel: monitor.ErrNotOwner,
			msg: func(me, holder int64) []string {
				return []string{"monitor: ", fmt.Sprintf("unlock by goroutine %d", me), fmt.Sprintf("write-locked by goroutine %d", holder)}
			}},
		{name: "Unlock of unlocked", misuse: (*monitor.RWMonitor).Unlock, sentinel: monitor.ErrNotOwner,
			msg: func(me, _ int64) []string { return []string{"not write-locked", fmt.Sprintf("goroutine %d", me)} }},
		{name: "Unlock by a reader", before: holds{0, 1}, misuse: (*monitor.RWMonitor).Unlock, sentinel: monitor.ErrNotOwner,
			msg: func(me, _ int64) []string { return []string{"only for reading", fmt.Sprintf("goroutine %d", me)} }},
		{name: "RUnlock of unlocked", misuse: (*monitor.RWMonitor).RUnlock, sentinel: monitor.ErrNotOwner,
			msg: func(me, _ int64) []string { return []string{"holds no read lock", fmt.Sprintf("goroutine %d", me)} }},
		{name: "RUnlock by the writer without a read hold", before: holds{1, 0}, misuse: (*monitor.RWMonitor).RUnlock, sentinel: monitor.ErrNotOwner,
			msg: func(me, _ int64) []string { return []string{"only for writing", fmt.Sprintf("goroutine %d", me)} }},
		{name: "RUnlock by a stranger", before: holds{0, 3}, stranger: true, misuse: (*monitor.RWMonitor).RUnlock, sentinel: monitor.ErrNotOwner,
			msg: func(me, _ int64) []string { return []string{"holds no read lock", fmt.Sprintf("goroutine %d", me)} }},
		{name: "LockContext with a nil context by the writer", before: holds{1, 0}, misuse: func(rw *monitor.RWMonitor) { _ = rw.LockContext(nilContext) },
			sentinel: monitor.ErrNilContext, msg: func(me, _ int64) []string { return []string{"monitor: ", "nil context"} }},
		{name: "RLockContext with a nil context by a reader", before: holds{0, 1}, misuse: func(rw *monitor.RWMonitor) { _ = rw.RLockContext(nilContext) },
			sentinel: monitor.ErrNilContext, msg: func(me, _ int64) []string { return []string{"monitor: ", "nil context"} }},
		{name: "one RUnlock too many", misuse: func(rw *monitor.RWMonitor) { rw.RLock(); rw.RLock(); rw.RUnlock(); rw.RUnlock(); rw.RUnlock() },
			sentinel: monitor.ErrNotOwner, msg: func(me, _ int64) []string { return []string{"holds no read lock"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			locktest.ForEachMode(t, func(t *testing.T) {
				var rw monitor.RWMonitor
				self := testutil.GoroutineID()
				for range tc.before.w {
					rw.Lock()
				}
				for range tc.before.r {
					rw.RLock()
				}
				err, me := testutil.MisusePanic(t, tc.stranger, func() { tc.misuse(&rw) })
				testutil.ErrorIsOnly(t, err, tc.sentinel, monitor.ErrUpgrade, monitor.ErrNotOwner, monitor.ErrNilContext)
				for _, s := range tc.msg(me, self) {
					assert.Contains(t, err.Error(), s)
				}
				assert.Equal(t, tc.before, holdsOf(&rw), "holds after the misuse")
				w, r := monitor.RWQueues(&rw)
				assert.Zero(t, w+r)
				for range tc.before.r {
					rw.RUnlock()
				}
				for range tc.before.w {
					rw.Unlock()
				}
				assert.False(t, rw.Locked())
				assert.Zero(t, rw.Readers())
				require.True(t, rw.TryLock())
				rw.Unlock()
			})
		})
	}
}

// TestRWMonitorReentry: write and read holds are counted separately, and
// Lock, RLock, Unlock leaves the caller a reader (downgrade).
func TestRWMonitorReentry(t *testing.T) {
	var rw monitor.RWMonitor
	rw.Lock()
	rw.Lock()
	require.True(t, rw.TryLock(), "TryLock by the writer")
	require.NoError(t, rw.LockContext(context.Background()))
	assert.Equal(t, holds{4, 0}, holdsOf(&rw))
	rw.RLock()
	require.True(t, rw.TryRLock(), "TryRLock by the writer")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, rw.RLockContext(ctx), "a holder's RLockContext cannot block, so a done context does not matter")
	assert.Equal(t, holds{4, 3}, holdsOf(&rw))
	assert.True(t, rw.Owned())
	assert.True(t, rw.ReadOwned())
	assert.Equal(t, 1, rw.Readers())
	for range 4 {
		rw.Unlock()
	}
	// Downgraded: a reader with three holds, no writer.
	assert.Equal(t, holds{0, 3}, holdsOf(&rw))
	assert.False(t, rw.Locked())
	assert.False(t, rw.TryLock(), "TryLock by a reader (an upgrade) fails")
	require.True(t, rw.TryRLock())
	assert.Equal(t, holds{0, 4}, holdsOf(&rw))
	other, _ := testutil.OnOther(t, func() {
		if !rw.TryRLock() {
			panic("a second reader could not enter after the downgrade")
		}
		rw.RUnlock()
		if rw.TryLock() {
			panic("a writer entered while a reader holds")
		}
	})
	assert.Nil(t, other)
	for range 4 {
		rw.RUnlock()
	}
	assert.Equal(t, holds{}, holdsOf(&rw))
	assert.Zero(t, rw.Readers())
}

// TestRWMonitorReentrantReadPassesQueuedWriter: a reader read-locks again
// while a writer waits for it (the sync.RWMutex deadlock): it passes;
// a first-time reader queues behind the writer; the writer goes when the
// reader has released every hold.
func TestRWMonitorReentrantReadPassesQueuedWriter(t *testing.T) {
	locktest.ForEachMode(t, func(t *testing.T) {
		var rw monitor.RWMonitor
		rw.RLock()
		order := make(chan string, 4)
		go func() {
			rw.Lock()
			order <- "writer"
			rw.Unlock()
		}()
		testutil.WaitFor(t, "writer draining", func() bool { return monitor.RWDraining(&rw) })
		rw.RLock() // must not block
		require.NoError(t, rw.RLockContext(context.Background()))
		assert.Equal(t, 3, rw.ReadHoldCount())
		go func() {
			rw.RLock()
			order <- "reader"
			rw.RUnlock()
		}()
		testutil.WaitFor(t, "first-time reader queued", func() bool { _, r := monitor.RWQueues(&rw); return r == 1 })
		assert.False(t, onOtherTryRLock(t, &rw), "TryRLock by a first-time reader while a writer waits")
		rw.RUnlock()
		rw.RUnlock()
		select {
		case s := <-order:
			t.Fatalf("%s went while the reader still held one hold", s)
		default:
		}
		rw.RUnlock()
		assert.Equal(t, "writer", testutil.Await(t, order, "writer"))
		assert.Equal(t, "reader", testutil.Await(t, order, "queued reader"))
	})
}

func onOtherTryRLock(t *testing.T, rw *monitor.RWMonitor) bool {
	res := make(chan bool, 1)
	go func() {
		ok := rw.TryRLock()
		if ok {
			rw.RUnlock()
		}
		res <- ok
	}()
	return testutil.Await(t, res, "TryRLock")
}

// TestRWMonitorUpgradeRefusedWithOthers: the upgrade is refused at once
// even when other readers hold and a writer waits (Java hangs there).
func TestRWMonitorUpgradeRefusedWithOthers(t *testing.T) {
	var rw monitor.RWMonitor
	rw.RLock()
	release := make(chan struct{})
	holding := make(chan struct{})
	go func() {
		rw.RLock()
		close(holding)
		<-release
		rw.RUnlock()
	}()
	testutil.Await(t, holding, "other reader")
	wdone := make(chan struct{})
	go func() {
		rw.Lock()
		rw.Unlock()
		close(wdone)
	}()
	testutil.WaitFor(t, "writer draining", func() bool { return monitor.RWDraining(&rw) })
	err := testutil.MustPanicErr(t, rw.Lock)
	assert.ErrorIs(t, err, monitor.ErrUpgrade)
	assert.False(t, rw.TryLock())
	assert.Equal(t, holds{0, 1}, holdsOf(&rw))
	rw.RUnlock()
	close(release)
	testutil.Await(t, wdone, "writer")
}

// TestRWMonitorCondRestoresHolds: a wait on NewCond's condition releases
// every write and read hold (another goroutine can then take the write
// lock) and restores both counts, whether it returns by Signal, timeout or
// cancellation.
func TestRWMonitorCondRestoresHolds(t *testing.T) {
	for _, how := range []string{"signal", "broadcast", "timeout", "cancel", "WaitWhile"} {
		t.Run(how, func(t *testing.T) {
			var rw monitor.RWMonitor
			c := rw.NewCond()
			before := holds{3, 2}
			got := make(chan holds, 1)
			waiting := make(chan struct{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			flag := false
			go func() {
				for range before.w {
					rw.Lock()
				}
				for range before.r {
					rw.RLock()
				}
				close(waiting)
				switch how {
				case "signal", "broadcast":
					c.Wait()
				case "timeout":
					if c.WaitTimeout(time.Millisecond) {
						panic("WaitTimeout reported a signal nobody sent")
					}
				case "cancel":
					if err := c.WaitContext(ctx); err == nil {
						panic("WaitContext reported a signal nobody sent")
					}
				case "WaitWhile":
					c.WaitWhile(func() bool { return !flag })
				}
				got <- holdsOf(&rw)
				for range before.r {
					rw.RUnlock()
				}
				for range before.w {
					rw.Unlock()
				}
			}()
			testutil.Await(t, waiting, "waiter holding")
			if how == "timeout" {
				assert.Equal(t, before, testutil.Await(t, got, "timed-out wait"))
				return
			}
			// The waiter released everything: this goroutine can write.
			testutil.WaitFor(t, "waiter parked", func() bool {
				if !rw.TryLock() {
					return false
				}
				defer rw.Unlock()
				return c.Waiters() == 1
			})
			rw.Lock()
			assert.Zero(t, rw.Readers(), "the waiter's read holds are released while it waits")
			switch how {
			case "signal":
				c.Signal()
			case "broadcast":
				c.Broadcast()
			case "cancel":
				cancel()
			case "WaitWhile":
				flag = true
				c.Signal()
			}
			rw.Unlock()
			assert.Equal(t, before, testutil.Await(t, got, "wait"))
		})
	}
}

func TestRWMonitorCondMisuse(t *testing.T) {
	var rw monitor.RWMonitor
	c := rw.NewCond()
	rw.RLock()
	err := testutil.MustPanicErr(t, c.Wait)
	assert.ErrorIs(t, err, condvar.ErrNotOwner, "Wait with only a read lock")
	rw.RUnlock()
	// A Cond of the RLocker is a read-lock condition (see condvar's
	// rlocker_test.go); the writer may not wait on it, also with read holds.
	rc := condvar.New(rw.RLocker())
	rw.Lock()
	rw.RLock()
	err = testutil.MustPanicErr(t, func() { rc.WaitTimeout(time.Hour) })
	assert.ErrorIs(t, err, condvar.ErrReadLocker)
	assert.Contains(t, err.Error(), "NewCond")
	assert.Equal(t, holds{1, 1}, holdsOf(&rw), "the refused wait changed no count")
	rw.RUnlock()
	rw.Unlock()
	c2 := condvar.New(&rw)
	rw.Lock()
	assert.False(t, c2.WaitTimeout(time.Nanosecond))
	assert.Equal(t, holds{1, 0}, holdsOf(&rw))
	rw.Unlock()
}

// TestRWMonitorParallelReaders: n readers with re-entry hold at once,
// inline and in the overflow map, which is dropped when they leave.
func TestRWMonitorParallelReaders(t *testing.T) {
	for _, n := range []int{1, 8, 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var rw monitor.RWMonitor
			holding := make(chan struct{})
			release := make(chan struct{})
			var wg sync.WaitGroup
			var bad atomic.Int32
			for range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rw.RLock()
					rw.RLock()
					holding <- struct{}{}
					<-release
					if rw.ReadHoldCount() != 2 {
						bad.Add(1)
					}
					rw.RUnlock()
					rw.RUnlock()
				}()
			}
			for range n {
				testutil.Await(t, holding, "reader")
			}
			assert.Equal(t, n, rw.Readers())
			close(release)
			wg.Wait()
			assert.Zero(t, bad.Load(), "readers with a wrong hold count")
			assert.Zero(t, rw.Readers())
			assert.False(t, monitor.RWOverflowAllocated(&rw))
		})
	}
}

// TestRWMonitorHammer is sync's HammerRWMutex with re-entry: readers take
// the read lock twice, writers the write lock twice plus a read hold
// (downgrading at the end), and an activity counter checks exclusion.
func TestRWMonitorHammer(t *testing.T) {
	iters := 500
	if testing.Short() {
		iters = 100
	}
	for _, c := range []struct{ procs, readers int }{{1, 3}, {4, 3}, {4, 10}, {10, 10}} {
		t.Run(fmt.Sprintf("procs=%d/readers=%d", c.procs, c.readers), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(c.procs))
			var rw monitor.RWMonitor
			var activity atomic.Int32
			var bad atomic.Int32
			var wg sync.WaitGroup
			for range c.readers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range iters {
						rw.RLock()
						if n := activity.Add(1); n < 1 || n >= 10000 {
							bad.Add(1)
						}
						rw.RLock()
						activity.Add(-1)
						rw.RUnlock()
						rw.RUnlock()
					}
				}()
			}
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range iters {
						rw.Lock()
						rw.Lock()
						if n := activity.Add(10000); n != 10000 {
							bad.Add(1)
						}
						activity.Add(-10000)
						rw.RLock()
						rw.Unlock()
						rw.Unlock()
						// Downgraded: other readers may enter, no writer.
						if n := activity.Add(1); n < 1 || n >= 10000 {
							bad.Add(1)
						}
						activity.Add(-1)
						rw.RUnlock()
					}
				}()
			}
			wg.Wait()
			assert.Zero(t, bad.Load(), "exclusion violations")
			assert.False(t, rw.Locked())
			assert.Zero(t, rw.Readers())
		})
	}
}

func TestRWMonitorNoAllocs(t *testing.T) {
	var rw monitor.RWMonitor
	assert.Zero(t, testing.AllocsPerRun(100, func() { rw.RLock(); rw.RUnlock() }), "first-entry read pair")
	assert.Zero(t, testing.AllocsPerRun(100, func() { rw.Lock(); rw.Unlock() }), "write pair")
	rw.RLock()
	assert.Zero(t, testing.AllocsPerRun(100, func() { rw.RLock(); rw.RUnlock() }), "re-entrant read pair")
	rw.RUnlock()
	release := testutil.HoldReaders(t, 7, rw.RLock, rw.RUnlock)
	defer release()
	assert.Zero(t, testing.AllocsPerRun(100, func() { rw.RLock(); rw.RUnlock() }), "read pair, eighth reader, home slot taken")
	rw.RLock()
	assert.Zero(t, testing.AllocsPerRun(100, func() { rw.RLock(); rw.RUnlock() }), "re-entrant read pair outside the home slot")
	rw.RUnlock()
}

// TestRWMonitorReentrantReadDisplaced: a reader that took another slot
// because its home slot was taken re-enters there once its home slot is
// free again (one reader, two holds), and leaves with its last RUnlock.
func TestRWMonitorReentrantReadDisplaced(t *testing.T) {
	var rw monitor.RWMonitor
	release := testutil.HoldReaders(t, 1, rw.RLock, rw.RUnlock)
	rw.RLock() // displaced
	release()
	rw.RLock()
	assert.Equal(t, 2, rw.ReadHoldCount())
	assert.Equal(t, 1, rw.Readers())
	rw.RUnlock()
	rw.RUnlock()
	assert.Zero(t, rw.ReadHoldCount())
	assert.Zero(t, rw.Readers())
	rw.Lock()
	rw.Unlock()
}
