package deadlock_test

import (
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/deadlock"
	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/mutex"
)

// The scenarios of go-deadlock's own test suite, on this package's types
// (see bench/detectdiff for the same scenarios run on go-deadlock), and a
// test for each difference of the package doc's table.

func lockPair(a, b sync.Locker) {
	a.Lock()
	b.Lock()
	b.Unlock()
	a.Unlock()
}

func lockThenRead(w sync.Locker, r *deadlock.RWMutex) {
	w.Lock()
	r.RLock()
	r.RUnlock()
	w.Unlock()
}

func TestOptsDefaults(t *testing.T) {
	o := deadlock.Opts
	assert.False(t, o.Disable)
	assert.False(t, o.DisableLockOrderDetection)
	assert.Equal(t, 30*time.Second, o.DeadlockTimeout)
	assert.Equal(t, 1024*64, o.MaxMapSize)
	assert.False(t, o.PrintAllCurrentGoroutines)
	assert.Equal(t, deadlock.TimerPoolDefault, o.TimerPool)
	assert.Equal(t, os.Stderr, o.LogBuf)
	require.NotNil(t, o.OnPotentialDeadlock)
	assert.Equal(t, deadlock.ErrDefaultAction, onOther(o.OnPotentialDeadlock), "outside a report, the default only panics")
}

func TestNoDeadlocks(t *testing.T) {
	h := setup(t, 5*time.Second, true)
	var a, c deadlock.RWMutex
	var b deadlock.Mutex
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 5 {
				a.Lock()
				b.Lock()
				c.RLock()
				runtime.Gosched()
				c.RUnlock()
				b.Unlock()
				a.Unlock()
			}
		}()
		go func() {
			defer wg.Done()
			for range 5 {
				a.RLock()
				b.Lock()
				c.Lock()
				runtime.Gosched()
				c.Unlock()
				b.Unlock()
				a.RUnlock()
			}
		}()
	}
	wg.Wait()
	assert.Zero(t, h.count(), h.log.String())
}

func TestTryLockNoDeadlocks(t *testing.T) {
	h := setup(t, 5*time.Second, true)
	var a, c deadlock.RWMutex
	var b deadlock.Mutex
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if a.TryLock() {
				if b.TryLock() {
					if c.TryRLock() {
						c.RUnlock()
					}
					b.Unlock()
				}
				a.Unlock()
			}
		}()
		go func() {
			defer wg.Done()
			if a.TryRLock() {
				if b.TryLock() {
					if c.TryLock() {
						c.Unlock()
					}
					b.Unlock()
				}
				a.RUnlock()
			}
		}()
	}
	wg.Wait()
	assert.Zero(t, h.count(), h.log.String())
}

func TestManyReadersFewWriters(t *testing.T) {
	h := setup(t, 5*time.Second, true)
	var mu deadlock.RWMutex
	var wg sync.WaitGroup
	for i := range 53 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if i < 50 {
					mu.RLock()
					runtime.Gosched()
					mu.RUnlock()
				} else {
					mu.Lock()
					runtime.Gosched()
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	assert.Zero(t, h.count(), h.log.String())
}

// TestLockOrder: W(a) then b in one goroutine, b then R(a) in another:
// reported once, to LogBuf and then OnPotentialDeadlock.
func TestLockOrder(t *testing.T) {
	h := setup(t, 0, true)
	var a deadlock.RWMutex
	var b deadlock.Mutex
	require.Nil(t, onOther(func() { lockPair(&a, &b) }))
	require.Nil(t, onOther(func() { lockThenRead(&b, &a) }))
	assert.Equal(t, 1, h.count())
	assert.True(t, h.logged.Load(), "the report is written before OnPotentialDeadlock is called")
	log := h.log.String()
	assert.True(t, strings.HasPrefix(log, "POTENTIAL DEADLOCK:\n"), log)
	assert.Contains(t, log, "possible circular locking dependency")
}

func TestLockOrderThreeLocks(t *testing.T) {
	h := setup(t, 0, true)
	var a, b, c deadlock.Mutex
	require.Nil(t, onOther(func() { lockPair(&a, &b) }))
	require.Nil(t, onOther(func() { lockPair(&b, &c) }))
	require.Nil(t, onOther(func() { lockPair(&c, &a) }))
	assert.Equal(t, 1, h.count(), "go-deadlock, which checks pairs, misses it")
}

// TestConcurrentLockOrder: one problem, made 200 times at once, is
// reported once (go-deadlock reports each time).
func TestConcurrentLockOrder(t *testing.T) {
	h := setup(t, 0, true)
	var a, b deadlock.Mutex
	lockPair(&a, &b)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range 10 {
				lockPair(&b, &a)
			}
		}()
	}
	close(start)
	wg.Wait()
	assert.Equal(t, 1, h.count())
}

// TestTryLockOrder: a TryLock cannot block, so taking b by TryLock under
// a orders nothing, and b then a is no inversion (go-deadlock reports it).
func TestTryLockOrder(t *testing.T) {
	h := setup(t, 0, true)
	var a deadlock.RWMutex
	var b deadlock.Mutex
	require.Nil(t, onOther(func() {
		if a.TryLock() {
			if b.TryLock() {
				b.Unlock()
			}
			a.Unlock()
		}
	}))
	require.Nil(t, onOther(func() { lockThenRead(&b, &a) }))
	assert.Zero(t, h.count(), h.log.String())
}

// TestHardDeadlock: a wait past DeadlockTimeout is reported, with lock
// order checks off, whether the holder took the lock by Lock or TryLock.
func TestHardDeadlock(t *testing.T) {
	for _, try := range []bool{false, true} {
		t.Run(map[bool]string{false: "Lock", true: "TryLock"}[try], func(t *testing.T) {
			h := setup(t, 20*time.Millisecond, false)
			var mu deadlock.Mutex
			if try {
				require.True(t, mu.TryLock())
			} else {
				mu.Lock()
			}
			w := spawn(func() {
				mu.Lock()
				defer mu.Unlock()
			})
			h.waitHits(t, 1)
			mu.Unlock()
			require.Nil(t, w.wait(t))
			assert.Equal(t, 1, h.count())
			assert.Contains(t, h.log.String(), "POTENTIAL DEADLOCK:")
		})
	}
}

// TestRWMutexWaits: a reader holds a; a writer waits for it, a reader
// waits behind the writer: two long waits reported.
func TestRWMutexWaits(t *testing.T) {
	for _, try := range []bool{false, true} {
		t.Run(map[bool]string{false: "RLock", true: "TryRLock"}[try], func(t *testing.T) {
			h := setup(t, 20*time.Millisecond, true)
			var a deadlock.RWMutex
			if try {
				require.True(t, a.TryRLock())
			} else {
				a.RLock()
			}
			writer := spawn(func() {
				a.Lock()
				defer a.Unlock()
			})
			waitBlocked(t, writer, "deadlock.(*RWMutex).Lock")
			reader := spawn(func() {
				a.RLock()
				defer a.RUnlock()
			})
			waitBlocked(t, reader, "deadlock.(*RWMutex).RLock")
			h.waitHits(t, 2)
			a.RUnlock()
			require.Nil(t, writer.wait(t))
			require.Nil(t, reader.wait(t))
			assert.Equal(t, 2, h.count())
		})
	}
}

func TestShortWaitNotReported(t *testing.T) {
	h := setup(t, 10*time.Second, false)
	var mu deadlock.Mutex
	mu.Lock()
	w := spawn(func() {
		mu.Lock()
		mu.Unlock()
	})
	waitBlocked(t, w, "deadlock.(*Mutex).Lock")
	mu.Unlock()
	require.Nil(t, w.wait(t))
	assert.Zero(t, h.count())
}

// TestDisable: Disable and DisableLockOrderDetection take effect when set,
// at any time, both ways.
func TestDisable(t *testing.T) {
	h := setup(t, 0, true)
	before := detect.CurrentMode()
	inversion := func() {
		var a, b deadlock.Mutex
		require.Nil(t, onOther(func() { lockPair(&a, &b) }))
		require.Nil(t, onOther(func() { lockPair(&b, &a) }))
	}
	deadlock.Opts.Disable = true
	inversion()
	assert.Zero(t, h.count())
	assert.Equal(t, detect.Off, detect.CurrentMode())

	deadlock.Opts.Disable = false
	deadlock.Opts.DisableLockOrderDetection = true
	inversion()
	assert.Zero(t, h.count())
	assert.Equal(t, detect.Cycles, detect.CurrentMode())

	deadlock.Opts.DisableLockOrderDetection = false
	inversion()
	assert.Equal(t, 1, h.count())
	assert.Equal(t, detect.Order, detect.CurrentMode())

	deadlock.Unapply()
	assert.Equal(t, before, detect.CurrentMode(), "the detector as it was")
}

// TestDisableStillExcludes: with detection off the locks still exclude,
// and a hand-off still works.
func TestDisableStillExcludes(t *testing.T) {
	setup(t, 0, true)
	deadlock.Opts.Disable = true
	var mu deadlock.Mutex
	n := 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				mu.Lock()
				n++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 800, n)
}

func TestPrintAllCurrentGoroutines(t *testing.T) {
	h := setup(t, 0, true)
	deadlock.Opts.PrintAllCurrentGoroutines = true
	var a, b deadlock.Mutex
	require.Nil(t, onOther(func() { lockPair(&a, &b) }))
	require.Nil(t, onOther(func() { lockPair(&b, &a) }))
	assert.Equal(t, 1, h.count())
	assert.Contains(t, h.log.String(), "All current goroutines:\ngoroutine ")
}

func TestNilLogBuf(t *testing.T) {
	h := setup(t, 0, true)
	deadlock.Opts.LogBuf = nil
	var a, b deadlock.Mutex
	require.Nil(t, onOther(func() { lockPair(&a, &b) }))
	require.Nil(t, onOther(func() { lockPair(&b, &a) }))
	assert.Equal(t, 1, h.count(), "OnPotentialDeadlock is still called")
}

// TestDefaultOnPotentialDeadlock: the default never exits; in a test
// binary a lock-order inversion panics in the goroutine that made it,
// without the lock, after the report went to LogBuf. A handler that calls
// the previous default last gets the same.
func TestDefaultOnPotentialDeadlock(t *testing.T) {
	if v := os.Getenv(detect.ReportEnvVar); v != "" && !strings.EqualFold(v, "panic") {
		t.Skipf("%s=%s: the default prints", detect.ReportEnvVar, v)
	}
	for _, wrapped := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "wrapped"}[wrapped], func(t *testing.T) {
			h := setup(t, 0, true)
			prev := initialOpts.OnPotentialDeadlock
			deadlock.Opts.OnPotentialDeadlock = prev
			var called int
			if wrapped {
				deadlock.Opts.OnPotentialDeadlock = func() { called++; prev() }
			}
			var a, b deadlock.Mutex
			require.Nil(t, onOther(func() { lockPair(&a, &b) }))
			v := onOther(func() {
				b.Lock()
				defer b.Unlock()
				a.Lock()
				t.Error("a.Lock returned")
			})
			err, _ := v.(error)
			require.ErrorIs(t, err, detect.ErrLockOrder)
			assert.True(t, a.TryLock(), "a was not left held")
			a.Unlock()
			assert.Contains(t, h.log.String(), "POTENTIAL DEADLOCK:")
			if wrapped {
				assert.Equal(t, 1, called)
			}
		})
	}
}

// initialOpts is Opts before any test changed them.
var initialOpts = deadlock.Opts

// TestActualDeadlock: a wait-for cycle is refused as it would form: the
// Lock closing it panics with a *detect.DeadlockError, after the report;
// go-deadlock reports and then hangs unless OnPotentialDeadlock exits.
func TestActualDeadlock(t *testing.T) {
	h := setup(t, 0, false)
	var a, b deadlock.Mutex
	aHeld, bHeld := make(chan struct{}), make(chan struct{})
	g1 := spawn(func() {
		a.Lock()
		defer a.Unlock()
		close(aHeld)
		<-bHeld
		b.Lock()
		b.Unlock()
	})
	<-aHeld
	g2 := spawn(func() {
		b.Lock()
		defer b.Unlock()
		close(bHeld)
		waitBlocked(t, g1, "deadlock.(*Mutex).Lock")
		a.Lock()
		t.Error("a.Lock returned")
	})
	err, _ := g2.wait(t).(error)
	var de *detect.DeadlockError
	require.ErrorAs(t, err, &de)
	require.Nil(t, g1.wait(t))
	assert.Equal(t, 1, h.count())
	assert.True(t, h.logged.Load())
}

// TestUnlockByAnotherGoroutine: allowed, as with sync.Mutex; the Mutex
// goes on excluding, and a goroutine waiting at the hand-off gets it.
func TestUnlockByAnotherGoroutine(t *testing.T) {
	h := setup(t, 0, true)
	var mu deadlock.Mutex
	mu.Lock()
	w := spawn(func() {
		mu.Lock()
		mu.Unlock()
	})
	waitBlocked(t, w, "deadlock.(*Mutex).Lock")
	require.Nil(t, onOther(mu.Unlock))
	require.Nil(t, w.wait(t))

	mu.Lock()
	assert.False(t, mu.TryLock())
	require.Nil(t, onOther(mu.Unlock))
	assert.True(t, mu.TryLock())
	mu.Unlock()
	assert.Zero(t, h.count())
}

func TestRWMutexUnlockByAnotherGoroutine(t *testing.T) {
	h := setup(t, 0, true)
	var rw deadlock.RWMutex
	rw.Lock()
	r := spawn(func() {
		rw.RLock()
		rw.RUnlock()
	})
	waitBlocked(t, r, "deadlock.(*RWMutex).RLock")
	require.Nil(t, onOther(rw.Unlock))
	require.Nil(t, r.wait(t))
	rw.RLock()
	assert.False(t, rw.TryLock())
	assert.True(t, rw.TryRLock())
	rw.RUnlock()
	rw.RUnlock()
	assert.Zero(t, h.count())
}

// TestHandOff: the holder locks again and waits for the goroutine it
// handed the Mutex to: correct under sync, no report (go-deadlock reports
// recursive locking).
func TestHandOff(t *testing.T) {
	h := setup(t, 30*time.Second, true)
	var mu deadlock.Mutex
	done := false
	mu.Lock()
	go func() {
		done = true
		mu.Unlock()
	}()
	mu.Lock()
	assert.True(t, done)
	mu.Unlock()
	assert.Zero(t, h.count(), h.log.String())
}

// TestRecursiveLockReported: a holder's Lock that nobody releases is
// reported after DeadlockTimeout (mutex.Mutex panics at once; sync hangs)
// and goes on waiting: here the test unlocks it, as sync allows.
func TestRecursiveLockReported(t *testing.T) {
	for _, rw := range []bool{false, true} {
		t.Run(map[bool]string{false: "Mutex", true: "RWMutex"}[rw], func(t *testing.T) {
			h := setup(t, 20*time.Millisecond, true)
			var mu deadlock.Mutex
			var rwmu deadlock.RWMutex
			var l sync.Locker = &mu
			if rw {
				l = &rwmu
			}
			locked := make(chan struct{})
			w := spawn(func() {
				l.Lock()
				close(locked)
				l.Lock() // waits: recursive, unless another goroutine unlocks
				l.Unlock()
			})
			<-locked
			h.waitHits(t, 1)
			assert.Contains(t, h.log.String(), "Recursive locking")
			assert.Contains(t, h.log.String(), "TestRecursiveLockReported")
			l.Unlock()
			require.Nil(t, w.wait(t))
			assert.Equal(t, 1, h.count())
		})
	}
}

// TestReadLockMisuse: recursive read locking and a reader's Lock panic at
// once (go-deadlock reports them, then may hang); RUnlock without a read
// lock, and Unlock of an unlocked lock, panic with mutex.ErrNotOwner.
func TestReadLockMisuse(t *testing.T) {
	setup(t, 0, true)
	var rw deadlock.RWMutex
	var mu deadlock.Mutex
	cases := []struct {
		name string
		f    func()
		want error
	}{
		{"recursive RLock", func() { rw.RLock(); defer rw.RUnlock(); rw.RLock() }, mutex.ErrRecursiveLock},
		{"read-to-write upgrade", func() { rw.RLock(); defer rw.RUnlock(); rw.Lock() }, mutex.ErrRecursiveLock},
		{"RUnlock by another goroutine", func() {
			rw.RLock()
			defer rw.RUnlock()
			panic(onOther(rw.RUnlock))
		}, mutex.ErrNotOwner},
		{"RUnlock of an unlocked RWMutex", rw.RUnlock, mutex.ErrNotOwner},
		{"Unlock of an unlocked RWMutex", rw.Unlock, mutex.ErrNotOwner},
		{"Unlock of an unlocked Mutex", mu.Unlock, mutex.ErrNotOwner},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err, _ := onOther(c.f).(error)
			require.ErrorIs(t, err, c.want)
			assert.True(t, rw.TryLock(), "rw left unlocked")
			rw.Unlock()
			assert.True(t, mu.TryLock(), "mu left unlocked")
			mu.Unlock()
		})
	}
}

func TestRLocker(t *testing.T) {
	setup(t, 0, true)
	var rw deadlock.RWMutex
	l := rw.RLocker()
	l.Lock()
	assert.False(t, rw.TryLock(), "RLocker's Lock is a read lock")
	assert.Nil(t, onOther(func() { require.True(t, rw.TryRLock()); rw.RUnlock() }))
	l.Unlock()
	assert.True(t, rw.TryLock())
	rw.Unlock()
}

// TestCond: NewCond is sync.NewCond over this package's locks.
func TestCond(t *testing.T) {
	h := setup(t, 0, true)
	for _, l := range []sync.Locker{new(deadlock.Mutex), new(deadlock.RWMutex)} {
		var c *sync.Cond = deadlock.NewCond(l)
		ready := false
		go func() {
			l.Lock()
			ready = true
			c.Signal()
			l.Unlock()
		}()
		l.Lock()
		for !ready {
			c.Wait()
		}
		l.Unlock()
	}
	var c deadlock.Cond
	c.L = new(deadlock.Mutex)
	c.Broadcast()
	assert.Zero(t, h.count())
}

func TestPassThroughs(t *testing.T) {
	var once deadlock.Once
	n := 0
	once.Do(func() { n++ })
	once.Do(func() { n++ })
	var wg deadlock.WaitGroup
	wg.Add(1)
	go wg.Done()
	wg.Wait()
	var m deadlock.Map
	m.Store("k", 1)
	v, _ := m.Load("k")
	p := deadlock.Pool{}
	p.New = func() any { return 2 }
	l := deadlock.Locker{Locker: new(deadlock.Mutex)}
	l.Lock()
	l.Unlock()
	var sm deadlock.StandardMutex
	var srw deadlock.StandardRWMutex
	var _ deadlock.MutexImpl = &sm
	var _ deadlock.RWMutexImpl = &srw
	sm.Lock()
	assert.False(t, sm.TryLock())
	sm.Unlock()
	assert.Equal(t, []any{1, 1, 2}, []any{n, v, p.Get()})
	deadlock.Unapply()
}

// TestZeroValues: the zero Mutex and RWMutex are unlocked.
func TestZeroValues(t *testing.T) {
	setup(t, 0, true)
	var mu deadlock.Mutex
	assert.True(t, mu.TryLock())
	mu.Unlock()
	var rw deadlock.RWMutex
	assert.True(t, rw.TryLock())
	rw.Unlock()
	assert.True(t, rw.TryRLock())
	rw.RUnlock()
}

func lockAtSite1(a, b *deadlock.Mutex) { lockPair(a, b) }
func lockAtSite2(a, b *deadlock.Mutex) { a.Lock(); b.Lock(); b.Unlock(); a.Unlock() }

// TestTwoInversions: two inversions made at different call sites are two
// problems, though every acquisition goes through this package's Lock.
func TestTwoInversions(t *testing.T) {
	h := setup(t, 0, true)
	var a, b, c, d deadlock.Mutex
	require.Nil(t, onOther(func() { lockAtSite1(&a, &b) }))
	require.Nil(t, onOther(func() { lockAtSite1(&b, &a) }))
	require.Nil(t, onOther(func() { lockAtSite2(&c, &d) }))
	require.Nil(t, onOther(func() { lockAtSite2(&d, &c) }))
	assert.Equal(t, 2, h.count(), h.log.String())
}

// TestRWMutexWriterReadsAfterHandOff: the writer's RLock waits for the
// goroutine it handed the write lock to, as with sync.RWMutex.
func TestRWMutexWriterReadsAfterHandOff(t *testing.T) {
	h := setup(t, 30*time.Second, true)
	var rw deadlock.RWMutex
	done := false
	rw.Lock()
	go func() {
		done = true
		rw.Unlock()
	}()
	rw.RLock()
	assert.True(t, done)
	assert.False(t, rw.TryLock())
	rw.RUnlock()
	assert.Zero(t, h.count(), h.log.String())
}
