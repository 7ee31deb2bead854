//go:build go1.25

package locktest

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// RWBubbleLock is a package-level read-write lock under test for sharing
// across testing/synctest bubbles, and how to observe its queues.
type RWBubbleLock struct {
	L         testutil.RWLock
	Reentrant bool // RWMonitor: readers re-enter
	// Queues returns the writers queued on the writer lock and the
	// readers parked behind a writer; Draining whether a writer waits for
	// readers to leave.
	Queues   func() (writers, readers int)
	Draining func() bool
}

func (lk RWBubbleLock) queuedReaders() int { _, r := lk.Queues(); return r }

// eventually polls cond, yielding between looks, for at most the liveness
// deadline; for goroutines that may not call t.Fatal.
func eventually(cond func() bool) bool {
	deadline := time.Now().Add(testutil.Liveness)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		runtime.Gosched()
	}
	return true
}

// RWReadersOutsideWriterInside: a reader outside any bubble holds the lock
// while a writer in a bubble waits for it to leave, and a second reader
// outside queues behind that writer. The outside reader's RUnlock must
// wake the bubble's writer, and the bubble's Unlock the outside reader,
// without the runtime's fatal error.
func RWReadersOutsideWriterInside(t *testing.T, lk RWBubbleLock) {
	rw := lk.L
	held := make(chan struct{})
	outside := make(chan struct{})
	var errs atomic.Int32
	go func() {
		defer close(outside)
		rw.RLock()
		close(held)
		if !eventually(lk.Draining) {
			errs.Add(1)
		}
		second := make(chan struct{})
		go func() {
			defer close(second)
			rw.RLock() // queued behind the bubble's writer
			rw.RUnlock()
		}()
		if !eventually(func() bool { return lk.queuedReaders() == 1 }) {
			errs.Add(1)
		}
		rw.RUnlock() // the bubble's writer is woken from outside
		<-second
	}()
	<-held
	synctest.Test(t, func(t *testing.T) {
		rw.Lock()
		assert.True(t, rw.Owned())
		assert.Zero(t, rw.Readers())
		rw.Unlock()
	})
	testutil.Await(t, outside, "outside readers")
	assert.Zero(t, errs.Load(), "the outside goroutine saw no drain or no queued reader")
	assert.False(t, rw.Locked())
	assert.Zero(t, rw.Readers())
}

// RWWriterOutsideReadersInside: a writer outside any bubble holds the lock
// while a reader in a bubble queues behind it, then another writer
// outside waits for that reader to leave. The outside writer's Unlock must
// admit and wake the bubble's reader, and the bubble's RUnlock wake the
// outside writer.
func RWWriterOutsideReadersInside(t *testing.T, lk RWBubbleLock) {
	rw := lk.L
	held := make(chan struct{})
	readIn := make(chan struct{}) // made outside: the bubble may close it
	outside := make(chan struct{})
	var errs atomic.Int32
	go func() {
		defer close(outside)
		rw.Lock()
		close(held)
		if !eventually(func() bool { return lk.queuedReaders() == 1 }) {
			errs.Add(1)
		}
		rw.Unlock() // admits the bubble's reader, from outside
		<-readIn
		rw.Lock() // waits for the bubble's reader to leave
		rw.Unlock()
	}()
	<-held
	synctest.Test(t, func(t *testing.T) {
		rw.RLock()
		assert.True(t, rw.ReadOwned())
		close(readIn)
		for !lk.Draining() {
			runtime.Gosched() // the writer is outside: no synctest.Wait for it
		}
		rw.RUnlock() // wakes the outside writer
	})
	testutil.Await(t, outside, "outside writer")
	assert.Zero(t, errs.Load(), "the outside goroutine saw no queued reader")
	assert.False(t, rw.Locked())
	assert.Zero(t, rw.Readers())
}

// RWNonDurableWaitsCancelled: a reader in a bubble queued behind a writer
// outside, and a writer in a bubble waiting for a reader outside, park on
// semaphores (not durably); cancelling their contexts ends both waits,
// leaves nothing queued, and the lock usable: the next waits, ended from
// outside, succeed.
func RWNonDurableWaitsCancelled(t *testing.T, lk RWBubbleLock) {
	rw := lk.L
	step := make(chan string) // made outside: both sides may use it
	outside := make(chan struct{})
	go func() {
		defer close(outside)
		rw.Lock()
		step <- "write-locked"
		<-step // the bubble's RLockContext was cancelled, its RLock queued
		rw.Unlock()
		<-step // the bubble's RLock returned and was released
		rw.RLock()
		step <- "read-locked"
		<-step // the bubble's LockContext was cancelled, its Lock draining
		rw.RUnlock()
	}()
	synctest.Test(t, func(t *testing.T) {
		<-step
		ctx, cancel := context.WithCancel(t.Context())
		res := make(chan error, 1)
		go func() { res <- rw.RLockContext(ctx) }()
		for lk.queuedReaders() != 1 {
			runtime.Gosched() // not a durable wait: synctest.Wait would not return
		}
		cancel()
		require.ErrorIs(t, <-res, context.Canceled)
		assert.Zero(t, lk.queuedReaders())
		go func() {
			for lk.queuedReaders() != 1 {
				runtime.Gosched()
			}
			step <- "queued"
		}()
		rw.RLock() // woken from outside
		rw.RUnlock()
		step <- "released"

		<-step
		ctx2, cancel2 := context.WithCancel(t.Context())
		go func() { res <- rw.LockContext(ctx2) }()
		for !lk.Draining() {
			runtime.Gosched()
		}
		cancel2()
		require.ErrorIs(t, <-res, context.Canceled)
		assert.False(t, lk.Draining())
		assert.False(t, rw.Locked())
		go func() {
			for !lk.Draining() {
				runtime.Gosched()
			}
			step <- "draining"
		}()
		rw.Lock() // woken by the outside reader's RUnlock
		rw.Unlock()
	})
	testutil.Await(t, outside, "outside goroutine")
	assert.False(t, rw.Locked())
	assert.Zero(t, rw.Readers())
}

// RWShared counts what HammerRW does to a lock shared across bubbles.
type RWShared struct {
	N       int          // guarded by the lock's write side
	Count   atomic.Int64 // successful write acquisitions
	writers atomic.Int32 // in write critical sections
	readers atomic.Int32 // in read critical sections
	Bad     atomic.Int64 // a writer met another writer or a reader
}

func (s *RWShared) write() {
	if s.writers.Add(1) != 1 || s.readers.Load() != 0 {
		s.Bad.Add(1)
	}
	s.N++
	s.Count.Add(1)
	s.writers.Add(-1)
}

func (s *RWShared) read() {
	s.readers.Add(1)
	if s.writers.Load() != 0 {
		s.Bad.Add(1)
	}
	s.readers.Add(-1)
}

// HammerRW takes lk n times in a mix of Lock, RLock (re-entered when lk is
// reentrant), RLockContext and LockContext (with contexts another
// goroutine cancels, so that some waits are cancelled while queued) and
// TryRLock, checking exclusion in s.
func HammerRW(lk RWBubbleLock, n int, s *RWShared) {
	rw := lk.L
	for i := range n {
		switch i % 5 {
		case 0:
			rw.Lock()
			s.write()
			rw.Unlock()
		case 1:
			rw.RLock()
			if lk.Reentrant {
				rw.RLock()
				rw.RUnlock()
			}
			s.read()
			rw.RUnlock()
		case 2:
			ctx, cancel := context.WithCancel(context.Background())
			go cancel()
			if rw.RLockContext(ctx) == nil {
				s.read()
				rw.RUnlock()
			}
			cancel()
		case 3:
			if rw.TryRLock() {
				s.read()
				rw.RUnlock()
			}
		default:
			ctx, cancel := context.WithCancel(context.Background())
			go cancel()
			if rw.LockContext(ctx) == nil {
				s.write()
				rw.Unlock()
			}
			cancel()
		}
	}
}

// RWSharedAcrossBubbles runs HammerRW on workers goroutines in each of two
// bubbles and on workers goroutines outside, all at once, for rounds
// rounds: nothing dies, nothing hangs, writers are exclusive, and nothing
// stays queued.
func RWSharedAcrossBubbles(t *testing.T, lk RWBubbleLock, rounds, workers, iters int) {
	var s RWShared
	work := func() {
		var wg sync.WaitGroup
		wg.Add(workers)
		for range workers {
			go func() {
				defer wg.Done()
				HammerRW(lk, iters, &s)
			}()
		}
		wg.Wait()
	}
	for range rounds {
		testutil.AcrossBubbles(t, 2, func(*testing.T) { work() }, 1, work)
	}
	lk.L.Lock()
	assert.Equal(t, int(s.Count.Load()), s.N, "every write acquisition was exclusive")
	lk.L.Unlock()
	assert.Zero(t, s.Bad.Load(), "a writer overlapped another writer or a reader")
	w, r := lk.Queues()
	assert.Zero(t, w)
	assert.Zero(t, r)
	assert.False(t, lk.Draining())
}

// RWDurableInOneBubble checks that lk, used by one bubble only, parks its
// waiters durably: a reader queued behind the bubble's writer, and a
// writer waiting for the bubble's reader (synctest.Wait returns only once
// they are durably blocked, and fake time advances while they wait).
func RWDurableInOneBubble(t *testing.T, lk RWBubbleLock) {
	rw := lk.L
	synctest.Test(t, func(t *testing.T) {
		rw.Lock()
		done := make(chan struct{})
		go func() {
			defer close(done)
			rw.RLock()
			rw.RUnlock()
		}()
		synctest.Wait()
		assert.Equal(t, 1, lk.queuedReaders())
		time.Sleep(time.Hour)
		rw.Unlock()
		<-done

		rw.RLock()
		done = make(chan struct{})
		go func() {
			defer close(done)
			rw.Lock()
			rw.Unlock()
		}()
		synctest.Wait()
		assert.True(t, lk.Draining())
		time.Sleep(time.Hour)
		rw.RUnlock()
		<-done
	})
}
