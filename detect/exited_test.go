package detect_test

import (
	"context"
	"errors"
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

// leaveHeld runs take on a new goroutine, which returns without releasing
// what it took, waits for it to exit, and returns its ID.
func leaveHeld(t *testing.T, take func()) int64 {
	t.Helper()
	p := testutil.Spawn(take)
	require.Nil(t, p.Wait(t))
	testutil.WaitFor(t, "the holder's exit", func() bool {
		_, _, alive := testutil.GoroutineDump(p.G)
		return !alive
	})
	return p.G
}

// checkExitedReport checks a Deadlock report of goroutine g's wait for l,
// whose holder h has exited holding it (for reading if read).
//
// In Order mode it also checks where the holder took the lock, recorded
// when that acquisition was the first of its chain of held locks: every
// holder here takes its lock holding nothing, and is the first to do so
// but for the Cond's signaller (site false).
func checkExitedReport(t *testing.T, mode detect.Mode, de *detect.DeadlockError, g, h int64, name string, read, site bool) {
	t.Helper()
	r := de.Report
	require.Equal(t, detect.Deadlock, r.Kind)
	require.Len(t, r.Steps, 2, "%v", r)
	w, x := r.Steps[0], r.Steps[1]
	assert.Equal(t, g, w.Goroutine)
	assert.Equal(t, name, detecttest.LockName(w.WaitsFor))
	assert.False(t, w.Exited)
	assert.NotEmpty(t, w.Stack, "the waiter's stack")
	assert.Equal(t, h, x.Goroutine)
	assert.True(t, x.Exited)
	assert.Equal(t, name, detecttest.LockName(x.Holds))
	assert.Equal(t, read, x.HoldsForReading)
	assert.Nil(t, x.WaitsFor)
	// Order mode records the site of a chain's first acquisition, which
	// another case running at the same time may have made first; the
	// lock's own holder PC names it then, which the fast paths record in
	// Order mode in every build (core.SitePC), for an exclusive hold
	// (readers record none).
	if mode == detect.Order && site && !read {
		require.NotEmpty(t, x.HoldsAt, "where the holder took the lock")
	}
	if len(x.HoldsAt) > 0 {
		assert.Contains(t, x.HoldsAt[0].Function, "detect_test.", "the holder's acquisition site")
	}
	s := r.String()
	assert.Contains(t, s, "which has exited")
	assert.Contains(t, s, "holds it for good")
	assert.Contains(t, de.Error(), "which has exited")
	assert.True(t, errors.Is(de, detect.ErrDeadlock))
}

// A wait for a lock whose holder has exited holding it can never end: in
// Cycles and Order modes it fails as a deadlock, within the check's
// bounded delay, in the waiting goroutine, naming the exited holder (and,
// in Order mode, where it took the lock). Lock panics with the
// *detect.DeadlockError, LockContext returns it, LockTimeout returns
// false; the waiter is off the queue and unregistered. For a Mutex, a
// Monitor held twice, an RWMutex's and an RWMonitor's write holder (a
// writer and a reader waiting), a read holder (a writer waiting for it to
// leave), and a Cond wait's reacquire.
func TestExitedHolder(t *testing.T) {
	for _, mode := range []detect.Mode{detect.Cycles, detect.Order} {
		t.Run(mode.String(), func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(mode))
			exitedCases(t, mode)
			assert.NotEmpty(t, rec.All(detect.Deadlock), "the reports were delivered")
		})
	}
}

// exitedCases runs the cases of TestExitedHolder at the same time (each
// waits for the check's delay), whatever go test's -parallel.
func exitedCases(t *testing.T, mode detect.Mode) {
	var wg sync.WaitGroup
	run := func(name string, f func(t *testing.T)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(name, f)
		}()
	}
	defer wg.Wait()
	lockKinds := []string{"mutex", "monitor", "rwmutex", "rwmonitor"}
	for _, kind := range lockKinds {
		for _, how := range []string{"Lock", "LockContext", "LockTimeout"} {
			run(kind+"/"+how, func(t *testing.T) {
				l := detecttest.Named(kind, kind+"-"+how)
				h := leaveHeld(t, func() {
					l.Lock()
					if kind == "monitor" {
						l.Lock() // held twice
					}
				})
				g := testutil.GoroutineID()
				switch how {
				case "Lock":
					v := testutil.Catch(l.Lock)
					checkExitedReport(t, mode, detecttest.DeadlockError(t, v), g, h, kind+"-"+how, false, true)
				case "LockContext":
					err := l.(interface {
						LockContext(context.Context) error
					}).LockContext(context.Background())
					var de *detect.DeadlockError
					require.True(t, errors.As(err, &de), "LockContext returned %v", err)
					checkExitedReport(t, mode, de, g, h, kind+"-"+how, false, true)
				case "LockTimeout":
					assert.False(t, l.(interface{ LockTimeout(time.Duration) bool }).LockTimeout(testutil.Liveness))
				}
				assert.Empty(t, detecttest.BlockedOn(l), "the waiter is unregistered")
				assert.Equal(t, h, detect.OwnerOf(l), "the exited holder still holds it")
			})
		}
	}
	for _, kind := range []string{"rwmutex", "rwmonitor"} {
		run(kind+"/RLock", func(t *testing.T) { // a reader behind an exited writer
			l := detecttest.Named(kind, kind+"-rlock")
			rw := l.(interface{ RLock() })
			h := leaveHeld(t, func() { l.Lock() })
			v := testutil.Catch(rw.RLock)
			checkExitedReport(t, mode, detecttest.DeadlockError(t, v), testutil.GoroutineID(), h, kind+"-rlock", false, true)
		})
		run(kind+"/reader-exited", func(t *testing.T) { // a writer waiting for an exited reader
			l := detecttest.Named(kind, kind+"-reader")
			rw := l.(interface {
				RLock()
				RUnlock()
				TryRLock() bool
				TryLock() bool
			})
			h := leaveHeld(t, func() { rw.RLock() })
			v := testutil.Catch(l.Lock)
			checkExitedReport(t, mode, detecttest.DeadlockError(t, v), testutil.GoroutineID(), h, kind+"-reader", true, true)
			// The writer gave the write lock back: readers come in.
			require.True(t, rw.TryRLock())
			rw.RUnlock()
			assert.False(t, rw.TryLock(), "the exited reader still holds its read lock")
		})
	}
	run("cond", func(t *testing.T) { // a Cond wait's reacquire, behind a signaller that exited holding the lock
		var m mutex.Mutex
		detect.SetName(&m, "cond-mutex")
		c := condvar.New(&m)
		waiter := testutil.Spawn(func() {
			m.Lock()
			c.Wait()
		})
		g := waiter.ID(t)
		testutil.WaitState(t, g, "condvar.(*Cond).Wait")
		h := leaveHeld(t, func() {
			m.Lock() // once the waiter's Wait has released m
			c.Signal()
		})
		checkExitedReport(t, mode, detecttest.DeadlockError(t, waiter.Wait(t)), g, h, "cond-mutex", false, false)
	})
}
