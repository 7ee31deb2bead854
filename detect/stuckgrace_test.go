package detect_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/mutex"
)

// onFirstPoll makes f run once, on the end-of-test check's goroutine,
// after the check's first look: what f starts begins after the check has.
func onFirstPoll(t *testing.T, f func()) {
	var once sync.Once
	t.Cleanup(detect.SetStuckPollHook(func() { once.Do(f) }))
}

// TestVerifyNoneCountsWaitsBegunDuringGrace: a goroutine of the test that
// starts waiting for a held lock only after the end-of-test check has
// looked once (the test returned as it went for the lock) is reported
// stuck when it is still waiting as the grace ends.
func TestVerifyNoneCountsWaitsBegunDuringGrace(t *testing.T) {
	t.Cleanup(detect.Configure(detect.WithWaitTimeout(0)))
	var mu mutex.Mutex
	detect.SetName(&mu, "late")
	send := make(chan int)
	held, goLock := make(chan struct{}), make(chan struct{})
	var holder, waiter *testutil.Proc
	onFirstPoll(t, func() { close(goLock) })
	ft := play(t, "TestLate", func() {
		holder = testutil.Spawn(func() {
			mu.Lock()
			defer mu.Unlock()
			close(held)
			send <- 1
		})
		<-held
		waiter = testutil.Spawn(func() {
			<-goLock
			mu.Lock() // LATE WAITER
			mu.Unlock()
		})
	})
	errs := ft.Errors()
	<-send
	require.Nil(t, holder.Wait(t))
	require.Nil(t, waiter.Wait(t))
	require.Len(t, errs, 1, "one stuck waiter")
	assert.Contains(t, errs[0], fmt.Sprintf("goroutine %d is stuck waiting for a lock", waiter.G))
	assert.Contains(t, errs[0], `to lock "late"`)
}

// TestVerifyNoneLateWaitThatEndsIsNotStuck: the fixed twin. A wait that
// begins after the check's first look and ends within the grace (its
// holder releases the lock) is not reported.
func TestVerifyNoneLateWaitThatEndsIsNotStuck(t *testing.T) {
	t.Cleanup(detect.Configure(detect.WithWaitTimeout(0)))
	var mu mutex.Mutex
	release := make(chan struct{})
	held, goLock := make(chan struct{}), make(chan struct{})
	var holder, waiter *testutil.Proc
	onFirstPoll(t, func() {
		close(goLock)
		detecttest.WaitParked(t, &mu, waiter.ID(t))
		close(release) // the holder unlocks: the wait ends in the grace
	})
	ft := play(t, "TestLateButDone", func() {
		holder = testutil.Spawn(func() {
			mu.Lock()
			defer mu.Unlock()
			close(held)
			<-release
		})
		<-held
		waiter = testutil.Spawn(func() {
			<-goLock
			mu.Lock()
			mu.Unlock()
		})
	})
	require.Nil(t, holder.Wait(t))
	require.Nil(t, waiter.Wait(t))
	assert.Empty(t, ft.Errors())
}

// TestVerifyNoneReportsStuckCondWaiter: a goroutine of the test left in a
// Cond wait nobody signals (the Cond waits are registered: a wait timeout
// is set) is reported stuck when the test ends, with its Cond and the
// Cond's lock; one signalled within the grace is not.
func TestVerifyNoneReportsStuckCondWaiter(t *testing.T) {
	if detect.CurrentMode() == detect.Off {
		// Off mode registers no Cond wait (it makes no reports), so
		// there is nothing for VerifyNone to see.
		t.Skip("Off mode: Cond waits are not registered")
	}
	t.Cleanup(detect.Configure(detect.WithWaitTimeout(time.Minute)))
	for _, signalled := range []bool{false, true} {
		var mu mutex.Mutex
		detect.SetName(&mu, "state")
		c := condvar.New(&mu)
		ready, registered := false, false
		var waiter *testutil.Proc
		ft := play(t, "TestCond", func() {
			waiter = testutil.Spawn(func() {
				mu.Lock()
				for !ready {
					c.Wait() // COND WAITER
				}
				mu.Unlock()
			})
			g := waiter.ID(t)
			// Bounded, so that a wait never registered fails with its
			// cause rather than as a hang of play.
			for end := time.Now().Add(10 * time.Second); time.Now().Before(end); runtime.Gosched() {
				if registered = detect.InCondWait(g); registered {
					break
				}
			}
			if signalled && registered {
				// Set once the waiter waits, so that no look of any check
				// before then signals it early.
				onFirstPoll(t, func() {
					mu.Lock()
					ready = true
					c.Signal()
					mu.Unlock()
				})
			}
		})
		require.True(t, registered, "goroutine %d never showed in a Cond wait (signalled case: %v); its stack:\n%s",
			waiter.G, signalled, goroutineStack(waiter.G))
		errs := ft.Errors()
		if !signalled {
			mu.Lock()
			ready = true
			c.Signal()
			mu.Unlock()
		}
		require.Nil(t, waiter.Wait(t))
		if signalled {
			assert.Empty(t, errs, "signalled in the grace")
			continue
		}
		require.Len(t, errs, 1, "one stuck Cond waiter")
		e := errs[0]
		assert.Contains(t, e, fmt.Sprintf("goroutine %d is stuck waiting on a Cond", waiter.G))
		assert.Regexp(t, `is waiting on Cond 0x[0-9a-f]+ on "state" \(\*mutex\.Mutex 0x[0-9a-f]+\), not signalled for \d+ms, at \S+stuckgrace_test\.go:\d+,`, e)
		assert.Contains(t, e, "and the test that started it has ended")
	}
}

// goroutineStack returns goroutine g's stack from a dump of all, or "".
func goroutineStack(g int64) string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	head := fmt.Sprintf("goroutine %d [", g)
	for _, st := range strings.Split(string(buf), "\n\n") {
		if strings.HasPrefix(st, head) {
			return st
		}
	}
	return "(not found: it has exited)"
}
