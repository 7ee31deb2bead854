//go:build go1.25

package mutex_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/misuse"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/locktest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// Package-level locks, as a program shares them between tests that run in
// testing/synctest bubbles and code outside any.
var (
	sharedMu  mutex.Mutex
	sharedMu2 mutex.Mutex
)

// A goroutine in a bubble waits for a package-level mutex held outside
// the bubble: the holder's Unlock must wake it without the runtime's
// "send on synctest channel from outside bubble" fatal error. A second
// waiter outside the bubble, queued behind it, gets the mutex next.
func TestSynctestMutexHeldOutsideBubble(t *testing.T) {
	locked := make(chan struct{})
	holder := make(chan struct{})
	go func() { // the holder, outside any bubble
		defer close(holder)
		sharedMu2.Lock()
		close(locked)
		testutil.WaitFor(t, "both waiters queued", func() bool { return mutex.QueueLen(&sharedMu2) == 2 })
		sharedMu2.Unlock()
	}()
	<-locked
	outsider := make(chan struct{})
	go func() {
		defer close(outsider)
		sharedMu2.Lock()
		sharedMu2.Unlock()
	}()
	testutil.WaitFor(t, "outside waiter queued", func() bool { return mutex.QueueLen(&sharedMu2) == 1 })
	synctest.Test(t, func(t *testing.T) {
		sharedMu2.Lock() // blocks until the holder outside releases
		assert.True(t, sharedMu2.Owned())
		sharedMu2.Unlock()
	})
	testutil.Await(t, holder, "holder")
	testutil.Await(t, outsider, "outside waiter")
	assert.False(t, sharedMu2.Locked())
}

// The other way round: the holder is in the bubble, the waiter outside,
// and a durable waiter of the bubble is queued too. The outside waiter is
// served after the bubble's waiter (the bubble's goroutines can only be
// woken from inside it), and nothing dies.
func TestSynctestMutexHeldInsideBubble(t *testing.T) {
	outsideStart := make(chan struct{}) // made outside: the bubble may send on it
	outsideDone := make(chan struct{})
	go func() {
		defer close(outsideDone)
		<-outsideStart
		sharedMu2.Lock()
		sharedMu2.Unlock()
	}()
	synctest.Test(t, func(t *testing.T) {
		sharedMu2.Lock()
		inner := make(chan struct{})
		go func() {
			defer close(inner)
			sharedMu2.Lock()
			sharedMu2.Unlock()
		}()
		synctest.Wait() // the bubble's waiter is durably blocked
		require.Equal(t, 1, mutex.QueueLen(&sharedMu2))
		close(outsideStart)
		for mutex.QueueLen(&sharedMu2) != 2 {
			runtime.Gosched() // the outside goroutine is not in the bubble: no synctest.Wait for it
		}
		sharedMu2.Unlock()
		<-inner
	})
	testutil.Await(t, outsideDone, "outside waiter")
	assert.False(t, sharedMu2.Locked())
}

// Two bubbles and goroutines outside any hammer one package-level Mutex at
// the same time. Before waiters chose how to park, this died with a fatal
// error in a few runs of a few hundred iterations.
func TestSynctestMutexSharedAcrossBubbles(t *testing.T) {
	locktest.SharedAcrossBubbles(t, timedMutex, &sharedMu)
}

// After being shared, a package-level Mutex used by one bubble only parks
// that bubble's waiters durably again.
func TestSynctestMutexDurableAgainAfterSharing(t *testing.T) {
	locktest.SharedAcrossBubbles(t, timedMutex, &sharedMu)
	locktest.DurableInOneBubble(t, timedMutex, &sharedMu)
}

// Starvation mode engages inside a bubble: the lock's clock is real time,
// so a waiter that keeps losing to a barging holder for more than 1 ms
// switches the mutex to starvation mode (on the bubble's fake clock no
// time would pass, and it never would). The holder holds the mutex nearly
// all the time and looks for the mode before each release; with one P the
// waiter runs only when the holder is preempted (every 10 ms).
func TestSynctestMutexStarvationInBubble(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var expired atomic.Bool
	timer := time.AfterFunc(testutil.Liveness, func() { expired.Store(true) }) // outside the bubble: real time
	defer timer.Stop()
	synctest.Test(t, func(t *testing.T) {
		var m mutex.Mutex
		var stop atomic.Bool
		m.Lock()
		done := make(chan struct{})
		go func() { // the waiter; it may win a race now and then, so it keeps trying
			defer close(done)
			for !stop.Load() {
				m.Lock()
				m.Unlock()
			}
		}()
		synctest.Wait()
		starving := false
		for !starving && !expired.Load() {
			for i := 0; i < 1000; i++ {
				starving = starving || mutex.Starving(&m)
			}
			m.Unlock()
			m.Lock()
		}
		stop.Store(true)
		m.Unlock()
		<-done
		assert.True(t, starving, "starvation mode never engaged")
	})
}

// A deadlock inside a bubble, on locks of the bubble, with the wait-timeout
// watchdog on (here configured from inside the bubble), fails at once with synctest's "all
// goroutines in bubble are blocked": the watchdog's timer is not in the
// bubble, so it neither keeps the bubble busy nor makes fake time advance
// forever. It runs in a child process, since synctest reports the
// deadlock by panicking the test.
func TestSynctestDeadlockInBubbleFailsAtOnce(t *testing.T) {
	if os.Getenv("LOCKSMITH_BUBBLE_DEADLOCK_CHILD") == "1" {
		synctest.Test(t, func(t *testing.T) {
			// Configured inside the bubble: a timer armed here would be
			// the bubble's.
			defer detect.Configure(detect.WithMode(detect.Order), detect.WithWaitTimeout(time.Minute))()
			var m mutex.Mutex
			never := make(chan struct{})
			m.Lock()
			go func() {
				m.Lock() // waits for the main goroutine, which waits forever
				m.Unlock()
			}()
			<-never
		})
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Liveness)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSynctestDeadlockInBubbleFailsAtOnce$", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), "LOCKSMITH_BUBBLE_DEADLOCK_CHILD=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "the child hung instead of failing:\n%s", out)
	require.Error(t, err, "the child's deadlocked bubble did not fail")
	assert.Contains(t, string(out), "all goroutines in bubble are blocked")
}

// A goroutine in a bubble that waits for a mutex held outside the bubble
// (so not durably: it parks on a semaphore) can still be cancelled, and
// leaves the queue empty and the mutex usable.
func TestSynctestMutexNonDurableWaitCancelled(t *testing.T) {
	locked := make(chan struct{})
	release := make(chan struct{}) // made outside: the bubble may close it
	holder := make(chan struct{})
	go func() {
		defer close(holder)
		sharedMu2.Lock()
		close(locked)
		<-release
		sharedMu2.Unlock()
	}()
	<-locked
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		res := make(chan error, 1)
		go func() { res <- sharedMu2.LockContext(ctx) }()
		for mutex.QueueLen(&sharedMu2) != 1 {
			runtime.Gosched() // not a durable wait: synctest.Wait would not return
		}
		cancel()
		assert.ErrorIs(t, <-res, context.Canceled)
		assert.Zero(t, mutex.QueueLen(&sharedMu2))
		close(release)
	})
	testutil.Await(t, holder, "holder")
	require.True(t, sharedMu2.TryLock())
	sharedMu2.Unlock()
}

// A goroutine outside any bubble that holds a mutex while it runs
// synctest.Test counts, for the runtime, as a goroutine of the bubble
// until Test returns: a goroutine of the bubble waiting for the mutex
// parks durably, and Test reports the deadlock. The holder's Unlock after
// that must not kill the process (waking the bubble's waiter from outside
// would be the runtime's fatal error): it leaves that waiter blocked, says
// so in a panic, and the mutex goes on, releasing and waking as before,
// in every detection mode; an RWMutex's writer lock likewise, with the
// bubble's queued reader stranded too (in the same panic) and a reader
// waiting behind the next writer woken. A read lock held so
// (rwmutex-read, rwmonitor-read) strands a writer of the bubble that waits for it to
// leave, and that writer holds the write lock: the reader's RUnlock
// cannot help it, and says so in a panic. Run in a child process:
// synctest.Test panics, and the bubble's goroutine stays blocked for good.
func TestSynctestHolderOutsideBubbleAfterDeadlock(t *testing.T) {
	if kind, mode, ok := strings.Cut(os.Getenv("LOCKSMITH_HOLDER_OUTSIDE_CHILD"), "/"); ok {
		holderOutsideChild(t, kind, mode)
		return
	}
	for _, kind := range []string{"mutex", "rwmutex", "rwmutex-read", "rwmonitor-read"} {
		for _, mode := range []string{"off", "cycles", "order"} {
			t.Run(kind+"/"+mode, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), testutil.Liveness)
				defer cancel()
				cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSynctestHolderOutsideBubbleAfterDeadlock$", "-test.timeout=10m")
				cmd.Env = append(os.Environ(), "LOCKSMITH_HOLDER_OUTSIDE_CHILD="+kind+"/"+mode)
				out, _ := cmd.CombinedOutput() // the child fails: its bubble deadlocked, and a goroutine is left
				require.NoError(t, ctx.Err(), "the child hung:\n%s", out)
				assert.NotContains(t, string(out), "fatal error")
				assert.Contains(t, string(out), "holder-outside: done", "child output:\n%s", out)
			})
		}
	}
}

func holderOutsideChild(t *testing.T, kind, mode string) {
	modes := map[string]detect.Mode{"off": detect.Off, "cycles": detect.Cycles, "order": detect.Order}
	defer detect.Configure(detect.WithMode(modes[mode]), detect.WithWaitTimeout(0))()
	switch kind {
	case "rwmutex-read":
		readerOutsideChild(t, new(mutex.RWMutex))
		return
	case "rwmonitor-read":
		readerOutsideChild(t, new(monitor.RWMonitor))
		return
	}
	var (
		m  sync.Locker
		rw *mutex.RWMutex
	)
	if kind == "rwmutex" {
		rw = new(mutex.RWMutex)
		m = rw
	} else {
		m = new(mutex.Mutex)
	}
	queued := func() int {
		if rw != nil {
			w, r := mutex.RWQueues(rw)
			return w + r
		}
		return mutex.QueueLen(m.(*mutex.Mutex))
	}
	m.Lock()
	deadlock := func() (r any) {
		defer func() { r = recover() }()
		synctest.Test(t, func(t *testing.T) {
			if rw != nil {
				go func() {
					rw.Lock() // behind the holder running Test: a durable wait
					rw.Unlock()
				}()
				synctest.Wait()
				rw.RLock() // a reader queued too: Unlock takes its other path
				rw.RUnlock()
				return
			}
			m.Lock() // behind the holder running Test: a durable wait, and a deadlock
			m.Unlock()
		})
		return nil
	}()
	require.NotNil(t, deadlock, "synctest.Test did not report the deadlock")
	stranded := func() (r any) {
		defer func() { r = recover() }()
		m.Unlock()
		return nil
	}()
	err, _ := stranded.(error)
	require.ErrorIs(t, err, mutex.ErrStranded, "Unlock's panic")
	assert.ErrorIs(t, err, monitor.ErrStranded)
	var me *misuse.Error
	if assert.ErrorAs(t, err, &me, "Unlock's panic") {
		assert.Equal(t, mutex.ErrStranded, me.Err)
		assert.NotZero(t, me.Goroutine)
	}
	assert.Contains(t, err.Error(), "the lock goes on without it", "Unlock's panic")
	if rw != nil {
		_, r := mutex.RWQueues(rw)
		assert.Zero(t, r, "the bubble's reader left queued")
		assert.False(t, mutex.RWReadersWaiting(rw), "readersWaiting left set")
		rw.RLock()
		rw.RUnlock()
	}
	m.Lock()
	w := testutil.Spawn(func() {
		m.Lock()
		m.Unlock()
	})
	var r *testutil.Proc
	if rw != nil {
		testutil.WaitFor(t, "a writer queued", func() bool { return queued() == 1 })
		r = testutil.Spawn(func() {
			rw.RLock()
			rw.RUnlock()
		})
	}
	want := 1
	if rw != nil {
		want = 2 // the writer and the reader
	}
	testutil.WaitFor(t, "waiters queued", func() bool { return queued() == want })
	m.Unlock()
	require.Nil(t, w.Wait(t))
	if r != nil {
		require.Nil(t, r.Wait(t))
	}
	fmt.Println("holder-outside: done (usable after the deadlocked bubble)")
}

// readerOutsideChild is the child of TestSynctestHolderOutsideBubbleAfterDeadlock
// for a read lock held while synctest.Test runs.
func readerOutsideChild(t *testing.T, rw interface {
	sync.Locker
	RLock()
	RUnlock()
	TryLock() bool
	TryRLock() bool
}) {
	rw.RLock()
	deadlock := func() (r any) {
		defer func() { r = recover() }()
		synctest.Test(t, func(t *testing.T) {
			go func() {
				rw.Lock() // waits for the reader running Test: a durable wait, and a deadlock
				rw.Unlock()
			}()
			synctest.Wait()
		})
		return nil
	}()
	require.NotNil(t, deadlock, "synctest.Test did not report the deadlock")
	stranded := func() (r any) {
		defer func() { r = recover() }()
		rw.RUnlock()
		return nil
	}()
	err, _ := stranded.(error)
	require.ErrorIs(t, err, mutex.ErrStranded, "RUnlock's panic")
	assert.ErrorAs(t, err, new(*misuse.Error), "RUnlock's panic")
	assert.Contains(t, err.Error(), "holding the write lock", "RUnlock's panic")
	assert.False(t, rw.TryRLock(), "the stranded writer holds the lock")
	assert.False(t, rw.TryLock(), "the stranded writer holds the lock")
	fmt.Println("holder-outside: done (the reader's RUnlock said the writer is stranded)")
}
