package mutex_test

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
	"github.com/locksmith-go/locksmith/mutex"
)

// nilContext is a nil context.Context, for the misuse tests.
var nilContext context.Context

var _ sync.Locker = (*mutex.RWMutex)(nil)

// rwAPI is the method set of sync.RWMutex: swapping the type of a field
// must compile.
type rwAPI interface {
	Lock()
	Unlock()
	RLock()
	RUnlock()
	TryLock() bool
	TryRLock() bool
	RLocker() sync.Locker
}

var (
	_ rwAPI = (*sync.RWMutex)(nil)
	_ rwAPI = (*mutex.RWMutex)(nil)
)

func TestZeroRWMutex(t *testing.T) {
	var rw mutex.RWMutex
	assert.False(t, rw.Locked(), "zero RWMutex is unlocked")
	assert.False(t, rw.Owned())
	assert.False(t, rw.ReadOwned())
	assert.Zero(t, rw.Readers())

	rw.Lock()
	assert.True(t, rw.Locked())
	assert.True(t, rw.Owned())
	assert.False(t, rw.ReadOwned())
	rw.Unlock()
	assert.False(t, rw.Locked())

	rw.RLock()
	assert.True(t, rw.ReadOwned())
	assert.False(t, rw.Owned())
	assert.False(t, rw.Locked())
	assert.Equal(t, 1, rw.Readers())
	rw.RUnlock()
	assert.Zero(t, rw.Readers())

	for name, lock := range map[string]func(*mutex.RWMutex) bool{
		"TryLock":      (*mutex.RWMutex).TryLock,
		"TryRLock":     (*mutex.RWMutex).TryRLock,
		"LockContext":  func(rw *mutex.RWMutex) bool { return rw.LockContext(context.Background()) == nil },
		"RLockContext": func(rw *mutex.RWMutex) bool { return rw.RLockContext(context.Background()) == nil },
	} {
		var rw mutex.RWMutex
		require.True(t, lock(&rw), "%s of a zero RWMutex", name)
		if rw.Owned() {
			rw.Unlock()
		} else {
			require.True(t, rw.ReadOwned(), name)
			rw.RUnlock()
		}
		assert.False(t, rw.Locked(), name)
		assert.Zero(t, rw.Readers(), name)
	}
}

// TestRWMutexMisuse checks every broken contract: the panic, its sentinel
// and message, that the lock is unchanged, and that the holder can still
// release it. It runs in every detection mode. No writer is present: the
// recursive read lock is caught on every run, not only when a writer
// happens to arrive between the two RLocks.
func TestRWMutexMisuse(t *testing.T) {
	type state int
	const (
		free  state = iota
		write       // the test goroutine holds the write lock
		read        // the test goroutine holds a read lock
	)
	ctxDone := func() context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	bg := context.Background()
	for _, tc := range []struct {
		name     string
		before   state
		stranger bool
		misuse   func(rw *mutex.RWMutex)
		sentinel error
		msg      func(me, holder int64) []string
	}{
		{name: "RLock while reading", before: read, misuse: (*mutex.RWMutex).RLock, sentinel: mutex.ErrRecursiveLock,
			msg: func(me, _ int64) []string {
				return []string{"mutex: ", "recursive read locking", fmt.Sprintf("goroutine %d", me)}
			}},
		{name: "RLockContext while reading", before: read, misuse: func(rw *mutex.RWMutex) { _ = rw.RLockContext(bg) }, sentinel: mutex.ErrRecursiveLock,
			msg: func(me, _ int64) []string { return []string{"recursive read locking", fmt.Sprintf("goroutine %d", me)} }},
		{name: "RLockContext with a done context while reading", before: read, misuse: func(rw *mutex.RWMutex) { _ = rw.RLockContext(ctxDone()) }, sentinel: mutex.ErrRecursiveLock,
			msg: func(me, _ int64) []string { return []string{"recursive read locking", fmt.Sprintf("goroutine %d", me)} }},
		{name: "Lock while reading", before: read, misuse: (*mutex.RWMutex).Lock, sentinel: mutex.ErrRecursiveLock,
			msg: func(me, _ int64) []string {
				return []string{"mutex: ", "read-to-write upgrade", fmt.Sprintf("goroutine %d", me)}
			}},
		{name: "LockContext while reading", before: read, misuse: func(rw *mutex.RWMutex) { _ = rw.LockContext(bg) }, sentinel: mutex.ErrRecursiveLock,
			msg: func(me, _ int64) []string { return []string{"read-to-write upgrade", fmt.Sprintf("goroutine %d", me)} }},
		{name: "Lock while writing", before: write, misuse: (*mutex.RWMutex).Lock, sentinel: mutex.ErrRecursiveLock,
			msg: func(me, _ int64) []string {
				return []string{"mutex: ", "recursive locking", fmt.Sprintf("goroutine %d", me)}
			}},
		{name: "LockContext with a done context while writing", before: write, misuse: func(rw *mutex.RWMutex) { _ = rw.LockContext(ctxDone()) }, sentinel: mutex.ErrRecursiveLock,
			msg: func(me, _ int64) []string { return []string{"recursive locking", fmt.Sprintf("goroutine %d", me)} }},
		{name: "RLock while writing", before: write, misuse: (*mutex.RWMutex).RLock, sentinel: mutex.ErrRecursiveLock,
			msg: func(me, _ int64) []string { return []string{"recursive locking", fmt.Sprintf("goroutine %d", me)} }},
		{name: "RLockContext while writing", before: write, misuse: func(rw *mutex.RWMutex) { _ = rw.RLockContext(bg) }, sentinel: mutex.ErrRecursiveLock,
			msg: func(me, _ int64) []string { return []string{"recursive locking", fmt.Sprintf("goroutine %d", me)} }},
		{name: "Unlock by a stranger", before: write, stranger: true, misuse: (*mutex.RWMutex).Unlock, sentinel: mutex.ErrNotOwner,
			msg: func(me, holder int64) []string {
				return []string{"mutex: ", fmt.Sprintf("unlock by goroutine %d", me), fmt.Sprintf("write-locked by goroutine %d", holder)}
			}},
		{name: "Unlock of unlocked", before: free, misuse: (*mutex.RWMutex).Unlock, sentinel: mutex.ErrNotOwner,
			msg: func(me, _ int64) []string {
				return []string{"mutex: ", "not write-locked", fmt.Sprintf("goroutine %d", me)}
			}},
		{name: "Unlock by a reader", before: read, misuse: (*mutex.RWMutex).Unlock, sentinel: mutex.ErrNotOwner,
			msg: func(me, _ int64) []string { return []string{"only for reading", fmt.Sprintf("goroutine %d", me)} }},
		{name: "Unlock by a stranger while read-locked", before: read, stranger: true, misuse: (*mutex.RWMutex).Unlock, sentinel: mutex.ErrNotOwner,
			msg: func(me, _ int64) []string { return []string{"not write-locked", fmt.Sprintf("goroutine %d", me)} }},
		{name: "RUnlock of unlocked", before: free, misuse: (*mutex.RWMutex).RUnlock, sentinel: mutex.ErrNotOwner,
			msg: func(me, _ int64) []string {
				return []string{"mutex: ", "holds no read lock", fmt.Sprintf("goroutine %d", me)}
			}},
		{name: "RUnlock by the writer", before: write, misuse: (*mutex.RWMutex).RUnlock, sentinel: mutex.ErrNotOwner,
			msg: func(me, _ int64) []string { return []string{"holds for writing", fmt.Sprintf("goroutine %d", me)} }},
		{name: "RUnlock by a stranger", before: read, stranger: true, misuse: (*mutex.RWMutex).RUnlock, sentinel: mutex.ErrNotOwner,
			msg: func(me, _ int64) []string { return []string{"holds no read lock", fmt.Sprintf("goroutine %d", me)} }},
		{name: "LockContext with a nil context", before: free, misuse: func(rw *mutex.RWMutex) { _ = rw.LockContext(nilContext) }, sentinel: mutex.ErrNilContext,
			msg: func(me, _ int64) []string { return []string{"mutex: ", "nil context"} }},
		{name: "RLockContext with a nil context", before: free, misuse: func(rw *mutex.RWMutex) { _ = rw.RLockContext(nilContext) }, sentinel: mutex.ErrNilContext,
			msg: func(me, _ int64) []string { return []string{"mutex: ", "nil context"} }},
		{name: "double RUnlock", before: free, misuse: func(rw *mutex.RWMutex) { rw.RLock(); rw.RUnlock(); rw.RUnlock() }, sentinel: mutex.ErrNotOwner,
			msg: func(me, _ int64) []string { return []string{"holds no read lock", fmt.Sprintf("goroutine %d", me)} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			locktest.ForEachMode(t, func(t *testing.T) {
				var rw mutex.RWMutex
				self := testutil.GoroutineID()
				switch tc.before {
				case write:
					rw.Lock()
				case read:
					rw.RLock()
				}
				err, me := testutil.MisusePanic(t, tc.stranger, func() { tc.misuse(&rw) })
				testutil.ErrorIsOnly(t, err, tc.sentinel, mutex.ErrRecursiveLock, mutex.ErrNotOwner, mutex.ErrNilContext)
				for _, s := range tc.msg(me, self) {
					assert.Contains(t, err.Error(), s)
				}

				// Unchanged, and the holder can release it.
				w, r := mutex.RWQueues(&rw)
				assert.Zero(t, w+r, "queues")
				switch tc.before {
				case write:
					assert.True(t, rw.Owned())
					assert.Zero(t, rw.Readers())
					assert.False(t, rw.TryLock(), "TryLock by the writer")
					assert.False(t, rw.TryRLock(), "TryRLock by the writer")
					rw.Unlock()
				case read:
					assert.True(t, rw.ReadOwned())
					assert.Equal(t, 1, rw.Readers())
					assert.False(t, rw.Locked())
					assert.False(t, rw.TryLock(), "TryLock by a reader")
					assert.False(t, rw.TryRLock(), "TryRLock by a reader")
					rw.RUnlock()
				}
				assert.False(t, rw.Locked())
				assert.Zero(t, rw.Readers())
				require.True(t, rw.TryLock(), "RWMutex not usable after a misuse panic")
				rw.Unlock()
			})
		})
	}
}

// TestRWMutexRecursiveRLockWithWriterWaiting is the deadlock sync.RWMutex
// hits in production: a reader read-locks again while a writer waits.
// sync.RWMutex would block the second RLock behind the writer, which
// waits for the first: here it panics at once, and the writer gets the
// lock once the reader unwinds.
func TestRWMutexRecursiveRLockWithWriterWaiting(t *testing.T) {
	var rw mutex.RWMutex
	rw.RLock()
	got := make(chan struct{})
	go func() {
		rw.Lock()
		rw.Unlock()
		close(got)
	}()
	testutil.WaitFor(t, "writer draining", func() bool { return mutex.RWDraining(&rw) })
	v := testutil.Catch(rw.RLock)
	require.NotNil(t, v)
	assert.ErrorIs(t, v.(error), mutex.ErrRecursiveLock)
	assert.Contains(t, v.(error).Error(), "recursive read locking")
	rw.RUnlock()
	testutil.Await(t, got, "writer after the reader unwound")
}

// TestRWMutexWriterPreference: while a writer waits for a reader, a new
// reader queues and TryRLock fails; the writer goes first, and the readers
// queued behind it are let in when it unlocks, before a second writer.
func TestRWMutexWriterPreference(t *testing.T) {
	var rw mutex.RWMutex
	rw.RLock()
	order := make(chan string, 8)
	w1 := make(chan struct{})
	go func() {
		rw.Lock()
		order <- "w1"
		<-w1
		rw.Unlock()
	}()
	testutil.WaitFor(t, "writer draining", func() bool { return mutex.RWDraining(&rw) })

	tryR, _ := testutil.OnOther(t, func() {
		if rw.TryRLock() {
			panic("TryRLock succeeded while a writer waits")
		}
	})
	assert.Nil(t, tryR)
	r2done := make(chan struct{})
	go func() {
		rw.RLock()
		order <- "r2"
		<-r2done
		rw.RUnlock()
	}()
	testutil.WaitFor(t, "second reader queued", func() bool { _, r := mutex.RWQueues(&rw); return r == 1 })
	rw.RUnlock()
	assert.Equal(t, "w1", testutil.Await(t, order, "writer"))

	// A second writer queues behind w1; the reader queued before it goes
	// first when w1 unlocks.
	w2done := make(chan struct{})
	go func() {
		rw.Lock()
		order <- "w2"
		rw.Unlock()
		close(w2done)
	}()
	testutil.WaitFor(t, "second writer queued", func() bool { w, _ := mutex.RWQueues(&rw); return w == 1 })
	close(w1)
	assert.Equal(t, "r2", testutil.Await(t, order, "queued reader"))
	testutil.WaitFor(t, "second writer draining", func() bool { return mutex.RWDraining(&rw) })
	close(r2done)
	assert.Equal(t, "w2", testutil.Await(t, order, "second writer"))
	testutil.Await(t, w2done, "second writer done")
	assert.False(t, rw.Locked())
	assert.Zero(t, rw.Readers())
}

func TestRWMutexLockContextCancelledWhileDraining(t *testing.T) {
	locktest.ForEachMode(t, func(t *testing.T) {
		var rw mutex.RWMutex
		rw.RLock()
		ctx, cancel := context.WithCancel(context.Background())
		res := make(chan error, 1)
		go func() { res <- rw.LockContext(ctx) }()
		testutil.WaitFor(t, "writer draining", func() bool { return mutex.RWDraining(&rw) })
		// A reader queues behind the writer; the writer's cancellation
		// must let it in.
		rdone := make(chan struct{})
		go func() {
			rw.RLock()
			rw.RUnlock()
			close(rdone)
		}()
		testutil.WaitFor(t, "reader queued", func() bool { _, r := mutex.RWQueues(&rw); return r == 1 })
		cancel()
		assert.ErrorIs(t, testutil.Await(t, res, "LockContext"), context.Canceled)
		testutil.Await(t, rdone, "reader let in after the writer gave up")
		assert.False(t, rw.Locked())
		assert.True(t, rw.ReadOwned())
		rw.RUnlock()
		require.True(t, rw.TryLock())
		rw.Unlock()
	})
}

func TestRWMutexRLockContextCancelledWhileQueued(t *testing.T) {
	locktest.ForEachMode(t, func(t *testing.T) {
		var rw mutex.RWMutex
		rw.Lock()
		ctx, cancel := context.WithCancel(context.Background())
		res := make(chan error, 1)
		go func() {
			err := rw.RLockContext(ctx)
			if err == nil {
				rw.RUnlock()
			}
			res <- err
		}()
		testutil.WaitFor(t, "reader queued", func() bool { _, r := mutex.RWQueues(&rw); return r == 1 })
		cancel()
		assert.ErrorIs(t, testutil.Await(t, res, "RLockContext"), context.Canceled)
		_, r := mutex.RWQueues(&rw)
		assert.Zero(t, r)
		assert.Zero(t, rw.Readers())
		rw.Unlock()

		done, cancel2 := context.WithCancel(context.Background())
		cancel2()
		assert.ErrorIs(t, rw.RLockContext(done), context.Canceled, "a done context fails even when free")
		assert.ErrorIs(t, rw.LockContext(done), context.Canceled)
		assert.Zero(t, rw.Readers())
		assert.False(t, rw.Locked())
	})
}

// TestRWMutexParallelReaders is sync's TestParallelReaders: n readers hold
// the lock at once. With more than eight, the readers beyond the inline
// slots go to the overflow map, which is dropped once they have left.
func TestRWMutexParallelReaders(t *testing.T) {
	for _, n := range []int{1, 3, 8, 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var rw mutex.RWMutex
			holding := make(chan struct{})
			release := make(chan struct{})
			done := make(chan struct{})
			for range n {
				go func() {
					rw.RLock()
					holding <- struct{}{}
					<-release
					if !rw.ReadOwned() {
						panic("reader lost its read lock")
					}
					rw.RUnlock()
					done <- struct{}{}
				}()
			}
			for range n {
				testutil.Await(t, holding, "reader holding")
			}
			assert.Equal(t, n, rw.Readers())
			assert.False(t, rw.TryLock())
			close(release)
			for range n {
				testutil.Await(t, done, "reader done")
			}
			assert.Zero(t, rw.Readers())
			assert.False(t, mutex.RWOverflowAllocated(&rw), "overflow map returned")
		})
	}
}

// hammerRWMutex is sync's HammerRWMutex: writers and readers check an
// activity counter that says how many of each are inside.
func hammerRWMutex(gomaxprocs, numReaders, iters int) func(t *testing.T) {
	return func(t *testing.T) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(gomaxprocs))
		var rw mutex.RWMutex
		var activity atomic.Int32
		var wg sync.WaitGroup
		errs := make(chan string, numReaders+2)
		reader := func() {
			defer wg.Done()
			for range iters {
				rw.RLock()
				if n := activity.Add(1); n < 1 || n >= 10000 {
					errs <- fmt.Sprintf("reader saw activity %d", n)
				}
				activity.Add(-1)
				rw.RUnlock()
			}
		}
		writer := func() {
			defer wg.Done()
			for range iters {
				rw.Lock()
				if n := activity.Add(10000); n != 10000 {
					errs <- fmt.Sprintf("writer saw activity %d", n)
				}
				activity.Add(-10000)
				rw.Unlock()
			}
		}
		wg.Add(numReaders + 2)
		go writer()
		for range numReaders / 2 {
			go reader()
		}
		go writer()
		for range numReaders - numReaders/2 {
			go reader()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		assert.False(t, rw.Locked())
		assert.Zero(t, rw.Readers())
	}
}

func TestRWMutexHammer(t *testing.T) {
	iters := 1000
	if testing.Short() {
		iters = 200
	}
	for _, c := range []struct{ procs, readers int }{{1, 1}, {1, 3}, {1, 10}, {4, 1}, {4, 3}, {4, 10}, {10, 1}, {10, 3}, {10, 10}, {10, 5}} {
		t.Run(fmt.Sprintf("procs=%d/readers=%d", c.procs, c.readers), hammerRWMutex(c.procs, c.readers, iters))
	}
}

// TestRWMutexRLockerPingPong adapts sync's TestRLocker: a writer and a
// reader through RLocker alternate, and neither enters while the other
// holds the lock. (sync's version re-locks through RLocker on the same
// goroutine, which RWMutex forbids; here each lock is taken once.)
func TestRWMutexRLockerPingPong(t *testing.T) {
	var rw mutex.RWMutex
	rl := rw.RLocker()
	var inside atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			rl.Lock()
			if inside.Add(1) != 1 {
				panic("reader entered while the writer held the lock")
			}
			if !rw.ReadOwned() {
				panic("RLocker's Lock did not take a read lock")
			}
			inside.Add(-1)
			rl.Unlock()
		}
	}()
	for range 100 {
		rw.Lock()
		if inside.Add(1) != 1 {
			t.Fatal("writer entered while the reader held the lock")
		}
		inside.Add(-1)
		rw.Unlock()
	}
	testutil.Await(t, done, "reader")
	v := testutil.Catch(rl.Unlock)
	require.NotNil(t, v)
	assert.ErrorIs(t, v.(error), mutex.ErrNotOwner, "RLocker().Unlock without a read lock")
}

func TestRWMutexCond(t *testing.T) {
	var rw mutex.RWMutex
	c := condvar.New(&rw)
	ready := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		rw.Lock()
		defer rw.Unlock()
		for !ready {
			c.Wait()
		}
		if !rw.Owned() {
			panic("Wait returned without the write lock")
		}
	}()
	testutil.WaitFor(t, "waiter", func() bool { rw.Lock(); defer rw.Unlock(); return c.Waiters() == 1 })
	// A wait needs the write lock: a reader does not hold the condition's lock.
	rw.RLock()
	v := testutil.Catch(c.Wait)
	rw.RUnlock()
	require.NotNil(t, v)
	assert.ErrorIs(t, v.(error), condvar.ErrNotOwner)
	assert.Zero(t, rw.Readers(), "the refused wait released nothing and took nothing")
	rw.Lock()
	ready = true
	c.Signal()
	rw.Unlock()
	testutil.Await(t, done, "waiter woken")

	// A Cond of the RLocker is a read-lock condition (see condvar's
	// rlocker_test.go); the writer may not wait on it.
	rc := condvar.New(rw.RLocker())
	rw.Lock()
	v = testutil.Catch(func() { rc.WaitTimeout(time.Hour) })
	require.NotNil(t, v, "the writer waiting on the read lock's Cond")
	err := v.(error)
	assert.ErrorIs(t, err, condvar.ErrReadLocker)
	assert.Contains(t, err.Error(), "condvar.New(rw)")
	assert.True(t, rw.Owned(), "the refused wait kept the write lock")
	rw.Unlock()
}

// TestRWMutexNoAllocs: a read pair allocates nothing while at most eight
// goroutines hold the lock for reading, also when another reader holds
// the caller's home slot, and neither does a write pair.
func TestRWMutexNoAllocs(t *testing.T) {
	var rw mutex.RWMutex
	release := testutil.HoldReaders(t, 7, rw.RLock, rw.RUnlock)
	assert.Zero(t, testing.AllocsPerRun(100, func() { rw.RLock(); rw.RUnlock() }), "read pair, eighth reader, home slot taken")
	release()
	assert.Zero(t, testing.AllocsPerRun(100, func() { rw.Lock(); rw.Unlock() }), "write pair")
	assert.Zero(t, testing.AllocsPerRun(100, func() { rw.RLock(); rw.RUnlock() }), "read pair")
}

// TestRWMutexCondTimeoutAndCancel: a wait that ends by timeout or by
// cancellation holds the write lock again, and nothing else.
func TestRWMutexCondTimeoutAndCancel(t *testing.T) {
	var rw mutex.RWMutex
	c := condvar.New(&rw)
	rw.Lock()
	assert.False(t, c.WaitTimeout(time.Millisecond), "nobody signals")
	assert.True(t, rw.Owned())
	assert.False(t, rw.ReadOwned())
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Millisecond, cancel)
	assert.ErrorIs(t, c.WaitContext(ctx), context.Canceled)
	assert.True(t, rw.Owned())
	assert.Zero(t, rw.Readers())
	rw.Unlock()
	assert.False(t, rw.Locked())
}

// TestRWMutexRecursiveReadDisplaced: a reader that took another slot
// because its home slot was taken is still refused a second read lock
// once its home slot is free again, and the readers beside it, in their
// home slots, read as usual.
func TestRWMutexRecursiveReadDisplaced(t *testing.T) {
	var rw mutex.RWMutex
	release := testutil.HoldReaders(t, 1, rw.RLock, rw.RUnlock)
	rw.RLock() // displaced
	release()
	assert.Equal(t, 1, rw.Readers())
	err, _ := testutil.Catch(rw.RLock).(error)
	require.ErrorIs(t, err, mutex.ErrRecursiveLock)
	assert.Contains(t, err.Error(), "recursive read locking")
	assert.Equal(t, 1, rw.Readers(), "the refused RLock took no slot")
	v, _ := testutil.OnOther(t, func() { rw.RLock(); rw.RUnlock() })
	assert.Nil(t, v, "another reader beside the displaced one")
	rw.RUnlock()
	assert.Zero(t, rw.Readers())
	rw.Lock()
	rw.Unlock()
}
