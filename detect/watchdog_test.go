package detect_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
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

// waitTimeout is small so that the tests are quick; nothing depends on its
// precise value.
const waitTimeout = 20 * time.Millisecond

// reportsFor returns the WaitTimeout reports about goroutine g.
func reportsFor(rec *detecttest.Recorder, g int64) []*detect.Report {
	var out []*detect.Report
	for _, r := range rec.All(detect.WaitTimeout) {
		if r.Steps[0].Goroutine == g {
			out = append(out, r)
		}
	}
	return out
}

// TestWaitTimeout: a goroutine blocked on one lock for longer than the
// wait timeout gets exactly one report, naming the lock, the holder and
// the holder's current stack; a goroutine waiting on a Cond is not
// blocked on a lock and gets none. In Cycles mode the report is on only
// with WithWaitTimeout; in Order mode too.
//
// "Exactly one" without a sleep: after the first waiter's report, a
// second goroutine starts to wait on another lock; its own report arrives
// only after the watchdog has looked at the first waiter again for at
// least a full timeout.
func TestWaitTimeout(t *testing.T) {
	for _, mode := range []detect.Mode{detect.Cycles, detect.Order} {
		t.Run(mode.String(), func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(mode), detect.WithWaitTimeout(waitTimeout))
			mu := detecttest.Named("mutex", "mu").(*mutex.Mutex)
			mu2 := detecttest.Named("monitor", "mu2")
			cm := new(mutex.Mutex)
			c := condvar.New(cm)
			me := testutil.GoroutineID()

			condWaiting := make(chan struct{})
			condWaiter := testutil.Spawn(func() {
				cm.Lock()
				defer cm.Unlock()
				close(condWaiting)
				c.Wait()
			})
			<-condWaiting

			mu.Lock()
			w := testutil.Spawn(func() {
				mu.Lock()
				mu.Unlock()
			})
			first := rec.WaitN(t, detect.WaitTimeout, 1)[0]
			require.Equal(t, w.ID(t), first.Steps[0].Goroutine, "%s", rec)
			require.Len(t, first.Steps, 2)
			assert.Equal(t, "mu", detecttest.LockName(first.Steps[0].WaitsFor))
			assert.Equal(t, me, first.Steps[1].Goroutine, "the holder")
			assert.Equal(t, "mu", detecttest.LockName(first.Steps[1].Holds))
			assert.GreaterOrEqual(t, first.Waited, waitTimeout)
			_, ok := detecttest.OwnFrame(first.Steps[1].Stack, ownPrefix)
			assert.True(t, ok, "the holder's current stack: %v", first.Steps[1].Stack)
			s := first.String()
			assert.Contains(t, s, fmt.Sprintf("goroutine %d has waited", w.G))
			assert.Contains(t, s, fmt.Sprintf("which is held by goroutine %d", me))

			mu2.Lock()
			w2 := testutil.Spawn(func() {
				mu2.Lock()
				mu2.Unlock()
			})
			rec.WaitN(t, detect.WaitTimeout, 2)
			assert.Len(t, reportsFor(rec, w2.ID(t)), 1)
			assert.Len(t, reportsFor(rec, w.G), 1, "one report per wait\n%s", rec)
			assert.Empty(t, reportsFor(rec, condWaiter.ID(t)), "a Cond waiter holds and waits for no lock")
			mu2.Unlock()
			mu.Unlock()
			require.Nil(t, w.Wait(t))
			require.Nil(t, w2.Wait(t))
			cm.Lock()
			c.Signal()
			cm.Unlock()
			require.Nil(t, condWaiter.Wait(t))
			assert.Len(t, rec.All(), 2, "%s", rec)
		})
	}
}

// TestWaitTimeoutHolderExited: Go runs no code when a goroutine exits, so
// a Mutex held by a goroutine that returned stays held. The wait-timeout
// report and Dump name that holder and say it has exited. The waiter uses
// LockContext, so that the test can end the wait.
func TestWaitTimeoutHolderExited(t *testing.T) {
	for _, mode := range []detect.Mode{detect.Cycles, detect.Order} {
		t.Run(mode.String(), func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(mode), detect.WithWaitTimeout(waitTimeout))
			mu := detecttest.Named("mutex", "orphan").(*mutex.Mutex)
			holder := testutil.OnOtherOK(t, func() { mu.Lock() })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errc := make(chan error, 1)
			w := testutil.Spawn(func() { errc <- mu.LockContext(ctx) })
			r := rec.WaitN(t, detect.WaitTimeout, 1)[0]
			require.Len(t, r.Steps, 2)
			assert.Equal(t, w.ID(t), r.Steps[0].Goroutine)
			assert.Equal(t, holder, r.Steps[1].Goroutine)
			assert.Empty(t, r.Steps[1].Stack)
			assert.Contains(t, r.String(), fmt.Sprintf("which is held by goroutine %d, which has exited", holder))

			var dump bytes.Buffer
			detect.Dump(&dump)
			assert.Contains(t, dump.String(), fmt.Sprintf("held by goroutine %d, which has exited", holder), dump.String())
			if mode == detect.Order {
				assert.Contains(t, dump.String(), fmt.Sprintf("goroutine %d (exited) holds:", holder), dump.String())
				assert.Contains(t, dump.String(), `"orphan" (*mutex.Mutex`)
			}
			cancel()
			require.ErrorIs(t, testutil.Await(t, errc, "LockContext"), context.Canceled)
			require.Nil(t, w.Wait(t))
			assert.Equal(t, holder, detect.OwnerOf(mu), "still held by the exited goroutine")
		})
	}
}

// TestWaitTimeoutReconfigured: a shorter wait timeout configured while
// goroutines are parked takes effect at once, not after a period computed
// from the timeout in force before (here an hour: a quarter of an hour
// would outlast the liveness deadline).
func TestWaitTimeoutReconfigured(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order), detect.WithWaitTimeout(time.Hour))
	var mu mutex.Mutex
	mu.Lock()
	w := testutil.Spawn(func() {
		mu.Lock()
		mu.Unlock()
	})
	detecttest.WaitParked(t, &mu, w.ID(t))
	restore := detect.Configure(detect.WithWaitTimeout(waitTimeout))
	r := rec.WaitN(t, detect.WaitTimeout, 1)[0]
	assert.Equal(t, w.G, r.Steps[0].Goroutine)
	restore()
	mu.Unlock()
	require.Nil(t, w.Wait(t))
}

// TestWaitTimeoutReporterExits: a reporter that ends its goroutine (as
// t.FailNow does, called from the watchdog's) does not stop the watchdog:
// a later wait is still reported.
func TestWaitTimeoutReporterExits(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Cycles), detect.WithWaitTimeout(waitTimeout))
	var calls atomic.Int32
	defer detect.Configure(detect.WithReporter(func(r *detect.Report) {
		rec.Add(r)
		if calls.Add(1) == 1 {
			runtime.Goexit()
		}
	}))()
	twoLongWaits(t, rec)
}

// twoLongWaits makes two waits, from two call sites (two problems, each
// reported), that last until rec holds a report of each: the second
// shows that the watchdog still runs after the reporter's first call.
func twoLongWaits(t *testing.T, rec *detecttest.Recorder) {
	t.Helper()
	for i := range 2 {
		var mu mutex.Mutex
		mu.Lock()
		w := testutil.Spawn(func() {
			if i == 0 {
				mu.Lock()
			} else {
				mu.Lock() // another call site, so another problem: reported too
			}
			mu.Unlock()
		})
		rec.WaitN(t, detect.WaitTimeout, i+1)
		mu.Unlock()
		require.Nil(t, w.Wait(t))
	}
}

// TestWatchdogReconfigureKeepsOneTimer: each configuration with a wait
// timeout starts its own chain of watchdog scans, and the chain it
// replaces is stopped at once, so that many rapid reconfigurations (a
// Configure and its restore per test, in a large suite) leave one pending
// timer rather than one per configuration until each fires (a quarter of
// the timeout later).
func TestWatchdogReconfigureKeepsOneTimer(t *testing.T) {
	detecttest.Configure(t, detect.WithMode(detect.Order), detect.WithWaitTimeout(time.Hour))
	for i := range 10_000 {
		restore := detect.Configure(detect.WithWaitTimeout(time.Hour + time.Duration(i)))
		restore()
	}
	assert.Equal(t, 1, detect.WatchdogPending(), "pending watchdog timers")
}
