package detectdiff_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sasha-s/go-deadlock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// A scenario written once runs on every library through a kit: the
// library's lock types behind rwLock and tryLocker, and how its reports
// are configured and counted. Calls go through interfaces; these are
// correctness tests, not benchmarks.
//
// Three kits: goDeadlockKit (deadlock.RWMutex and deadlock.Mutex, the
// originals), locksmithRWKit (mutex.RWMutex, monitor.RWMonitor and
// mutex.Mutex) and locksmithExclusiveKit, the exclusive-lock ports of
// differential_test.go, where go-deadlock's RWMutex becomes a Mutex or a
// Monitor whose read locks are Lock (see exclusive).

// tryLocker is what the scenarios need of a plain mutex.
type tryLocker interface {
	sync.Locker
	TryLock() bool
}

// kit is one library's side of the scenarios.
type kit struct {
	// configure sets detection up for one scenario: the wait timeout (0
	// for none) and, where the library can turn it off, lock-order
	// checking. Locksmith's side always runs in Order mode, which checks
	// both.
	configure func(t *testing.T, wait time.Duration, order bool) reports
	// rw returns a read-write lock of the kind "rwmutex" or "rwmonitor"
	// (go-deadlock has one kind), named for reports.
	rw func(kind, name string) rwLock
	// mutex returns a plain mutex of the kind "mutex" or "monitor"
	// (go-deadlock has one kind), named for reports.
	mutex func(kind, name string) tryLocker
	// waitBlocked waits until p is blocked in l's Lock, or RLock if read.
	waitBlocked func(t *testing.T, l sync.Locker, p *testutil.Proc, read bool)
}

// reports counts one scenario's reports.
type reports interface {
	count() int
	// onlyKind checks that every report is of kind k; go-deadlock's
	// reports have no kind.
	onlyKind(t *testing.T, k detect.Kind)
	// waitWaits waits for n reports of long waits.
	waitWaits(t *testing.T, n int)
	// checkWaits checks what the wait reports say about the holder (the
	// calling goroutine) and, on read-write locks, the writer and the
	// reader that waits behind it (nil where there is none); go-deadlock's
	// reports are not checked.
	checkWaits(t *testing.T, writer, reader *testutil.Proc)
}

func (h *gdHarness) onlyKind(*testing.T, detect.Kind)                      {}
func (h *gdHarness) waitWaits(t *testing.T, n int)                         { h.waitHits(t, n) }
func (h *gdHarness) checkWaits(*testing.T, *testutil.Proc, *testutil.Proc) {}

// lsReports is locksmith's reports; rw: the scenario's locks are
// read-write locks, whose wait reports say which side waits and holds.
type lsReports struct {
	rec *detecttest.Recorder
	rw  bool
}

func (r lsReports) waitWaits(t *testing.T, n int) { r.rec.WaitN(t, detect.WaitTimeout, n) }

func (r lsReports) checkWaits(t *testing.T, writer, reader *testutil.Proc) {
	t.Helper()
	if r.rw {
		checkRWWaitReports(t, r.rec, testutil.GoroutineID(), writer.G, reader.G)
	} else {
		checkWaitReports(t, r.rec, testutil.GoroutineID())
	}
}

func (r lsReports) count() int { return len(r.rec.All()) }

func (r lsReports) onlyKind(t *testing.T, k detect.Kind) {
	t.Helper()
	assert.Len(t, r.rec.All(k), len(r.rec.All()), "%s", r.rec)
}

var goDeadlockKit = kit{
	configure: func(t *testing.T, wait time.Duration, order bool) reports {
		return useGoDeadlock(t, wait, order)
	},
	rw:    func(string, string) rwLock { return new(deadlock.RWMutex) },
	mutex: func(string, string) tryLocker { return new(deadlock.Mutex) },
	waitBlocked: func(t *testing.T, l sync.Locker, p *testutil.Proc, read bool) {
		if _, ok := l.(*deadlock.RWMutex); !ok {
			gdWaitMutex(t, p.ID(t))
			return
		}
		frame := "sync.(*RWMutex).Lock"
		if read {
			frame = "sync.(*RWMutex).RLock"
		}
		testutil.WaitState(t, p.ID(t), frame)
	},
}

// gdWaitMutex waits until goroutine g is blocked in a go-deadlock Mutex's
// own sync.Mutex, past go-deadlock's checks. go-deadlock keeps its lock
// order under a sync.Mutex of its own, so "sync.(*Mutex).Lock" alone also
// matches a goroutine that waits for that one inside (*lockOrder).preLock,
// before its check has run (and reported). An RWMutex's frames,
// "sync.(*RWMutex).Lock" and RLock, are not ambiguous.
func gdWaitMutex(t *testing.T, g int64) {
	t.Helper()
	testutil.WaitFor(t, fmt.Sprintf("goroutine %d blocked in a go-deadlock Mutex", g), func() bool {
		state, stack, ok := testutil.GoroutineDump(g)
		return ok && state != "running" && state != "runnable" &&
			strings.Contains(stack, "sync.(*Mutex).Lock") && !strings.Contains(stack, "(*lockOrder)")
	})
}

var locksmithRWKit = kit{
	configure: func(t *testing.T, wait time.Duration, _ bool) reports {
		return lsReports{rec: lsConfigure(t, wait), rw: true}
	},
	rw:          namedRW,
	waitBlocked: lsWaitBlocked,
	mutex:       func(kind, name string) tryLocker { return detecttest.Named(kind, name).(tryLocker) },
}

var locksmithExclusiveKit = kit{
	configure: func(t *testing.T, wait time.Duration, _ bool) reports {
		return lsReports{rec: lsConfigure(t, wait)}
	},
	waitBlocked: lsWaitBlocked,
	rw: func(kind, name string) rwLock {
		switch kind {
		case "rwmutex":
			return exclusive{detecttest.Named("mutex", name).(tryLocker)}
		case "rwmonitor":
			return exclusive{detecttest.Named("monitor", name).(tryLocker)}
		}
		panic(kind)
	},
	mutex: locksmithRWKit.mutex,
}

func lsWaitBlocked(t *testing.T, l sync.Locker, p *testutil.Proc, _ bool) {
	if e, ok := l.(exclusive); ok {
		l = e.tryLocker
	}
	detecttest.WaitParked(t, l, p.ID(t))
}

// exclusive is a Mutex (for "rwmutex") or a Monitor (for "rwmonitor") in
// the exclusive-lock ports: its read locks are Lock.
type exclusive struct{ tryLocker }

func (e exclusive) RLock()         { e.Lock() }
func (e exclusive) RUnlock()       { e.Unlock() }
func (e exclusive) TryRLock() bool { return e.TryLock() }

// --- scenarios ---------------------------------------------------------

func noDeadlocks(k kit) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 5*time.Second, true)
		a, b, c := k.rw("rwmonitor", "a"), k.mutex("mutex", "b"), k.rw("rwmutex", "c")
		var wg sync.WaitGroup
		for range 10 {
			wg.Add(1)
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
			wg.Add(1)
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
		return rep.count()
	}
}

func tryLockNoDeadlocks(k kit) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 5*time.Second, true)
		a, b, c := k.rw("rwmonitor", "a"), k.mutex("mutex", "b"), k.rw("rwmutex", "c")
		var wg sync.WaitGroup
		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					if a.TryLock() {
						if b.TryLock() {
							if c.TryRLock() {
								runtime.Gosched()
								c.RUnlock()
							}
							b.Unlock()
						}
						a.Unlock()
					}
				}
			}()
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					if a.TryRLock() {
						if b.TryLock() {
							if c.TryLock() {
								runtime.Gosched()
								c.Unlock()
							}
							b.Unlock()
						}
						a.RUnlock()
					}
				}
			}()
		}
		wg.Wait()
		return rep.count()
	}
}

func manyReaders(k kit) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 5*time.Second, true)
		mu := k.rw("rwmonitor", "mu")
		var wg sync.WaitGroup
		for range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 50 {
					mu.RLock()
					runtime.Gosched()
					mu.RUnlock()
				}
			}()
		}
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 10 {
					mu.Lock()
					runtime.Gosched()
					mu.Unlock()
					runtime.Gosched()
				}
			}()
		}
		wg.Wait()
		return rep.count()
	}
}

// lockOrder: W(a) then b; b then R(a). kindA is a's kind on locksmith's
// side.
func lockOrder(k kit, kindA string) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 0, true)
		a, b := k.rw(kindA, "a"), k.mutex("mutex", "b")
		testutil.OnOtherOK(t, func() { lockPair(a, b) })
		testutil.OnOtherOK(t, func() { lockThenRead(b, a) })
		rep.onlyKind(t, detect.LockOrder)
		return rep.count()
	}
}

// tryLockOrder: TryLock(a) then TryLock(b); b then R(a). kindA is a's
// kind on locksmith's side.
func tryLockOrder(k kit, kindA string) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 0, true)
		a, b := k.rw(kindA, "a"), k.mutex("mutex", "b")
		testutil.OnOtherOK(t, func() {
			if a.TryLock() {
				if b.TryLock() {
					b.Unlock()
				}
				a.Unlock()
			}
		})
		testutil.OnOtherOK(t, func() { lockThenRead(b, a) })
		return rep.count()
	}
}

func concurrentLockOrder(k kit) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 0, true)
		a, b := k.mutex("mutex", "a"), k.mutex("mutex", "b")
		lockPair(a, b)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for range 10 {
					lockPair(b, a)
				}
			}()
		}
		close(start)
		wg.Wait()
		rep.onlyKind(t, detect.LockOrder)
		return rep.count()
	}
}

// threeLockOrder: a -> b, b -> c, c -> a, each pair in its own goroutine.
// go-deadlock checks lock order by pairs and misses it.
func threeLockOrder(k kit) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 0, true)
		a, b, c := k.mutex("mutex", "a"), k.mutex("monitor", "b"), k.mutex("mutex", "c")
		testutil.OnOtherOK(t, func() { lockPair(a, b) })
		testutil.OnOtherOK(t, func() { lockPair(b, c) })
		testutil.OnOtherOK(t, func() { lockPair(c, a) })
		rep.onlyKind(t, detect.LockOrder)
		return rep.count()
	}
}

// hiddenHolderOrder: another goroutine's failed TryLock of a makes
// go-deadlock forget that the test holds a, so a -> b is never recorded
// and b -> a is no inversion to it.
func hiddenHolderOrder(k kit) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 0, true)
		a, b := k.mutex("mutex", "a"), k.mutex("mutex", "b")
		a.Lock()
		testutil.OnOtherOK(t, func() { assert.False(t, a.TryLock()) })
		b.Lock()
		b.Unlock()
		a.Unlock()
		testutil.OnOtherOK(t, func() { lockPair(b, a) })
		rep.onlyKind(t, detect.LockOrder)
		return rep.count()
	}
}

// reentry: a read lock taken twice by one goroutine (a Monitor's Lock
// twice in the exclusive ports).
func reentry(k kit) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 0, true)
		a := k.rw("rwmonitor", "a")
		testutil.OnOtherOK(t, func() {
			a.RLock()
			a.RLock()
			a.RUnlock()
			a.RUnlock()
		})
		return rep.count()
	}
}

// lockOrderReadFirst: R(a) then b; b then W(a).
func lockOrderReadFirst(k kit) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 0, true)
		a, b := k.rw("rwmonitor", "a"), k.mutex("mutex", "b")
		testutil.OnOtherOK(t, func() {
			a.RLock()
			b.Lock()
			b.Unlock()
			a.RUnlock()
		})
		testutil.OnOtherOK(t, func() { lockPair(b, a) })
		rep.onlyKind(t, detect.LockOrder)
		return rep.count()
	}
}

// twoRWInversion: W(A) R(B), then W(B) R(A).
func twoRWInversion(k kit) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 0, true)
		a, b := k.rw("rwmutex", "A"), k.rw("rwmonitor", "B")
		testutil.OnOtherOK(t, func() { lockThenRead(a, b) })
		testutil.OnOtherOK(t, func() { lockThenRead(b, a) })
		rep.onlyKind(t, detect.LockOrder)
		return rep.count()
	}
}

// Which locks of a read cycle's scenario are write-locked, and when. The
// cycle is R(A) R(B) in one goroutine, then R(B) R(A) in another.
type writerAt int

const (
	noWriter        writerAt = iota
	writerOnA                // A, before the cycle forms
	writersBefore            // A and B, before the cycle forms
	lastWriterAfter          // A before, B after the cycle formed; then R(A) R(B) once more
)

// readCycle runs the read cycle with writers at w.
func readCycle(k kit, w writerAt) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 0, true)
		a, b := k.rw("rwmutex", "A"), k.rw("rwmonitor", "B")
		write := func(l sync.Locker) { testutil.OnOtherOK(t, func() { l.Lock(); l.Unlock() }) }
		ab := func() { a.RLock(); b.RLock(); b.RUnlock(); a.RUnlock() }
		if w != noWriter {
			write(a)
		}
		if w == writersBefore {
			write(b)
		}
		testutil.OnOtherOK(t, ab)
		testutil.OnOtherOK(t, func() { b.RLock(); a.RLock(); a.RUnlock(); b.RUnlock() })
		if w == lastWriterAfter {
			write(b)
			testutil.OnOtherOK(t, ab)
		}
		rep.onlyKind(t, detect.LockOrder)
		return rep.count()
	}
}

// hardDeadlock: the test holds mu (by Lock or TryLock); a goroutine waits
// for it past the timeout.
func hardDeadlock(k kit, try bool) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 20*time.Millisecond, false)
		mu := k.mutex("mutex", "mu")
		if try {
			require.True(t, mu.TryLock())
		} else {
			mu.Lock()
		}
		w := testutil.Spawn(func() {
			mu.Lock()
			defer mu.Unlock()
		})
		rep.waitWaits(t, 1)
		mu.Unlock()
		require.Nil(t, w.Wait(t))
		rep.checkWaits(t, nil, nil)
		return rep.count()
	}
}

func normalDeadlockDetection(k kit) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 20*time.Millisecond, true)
		mu := k.mutex("mutex", "mu")
		mu.Lock()
		mu.Unlock()
		mu.Lock()
		done := make(chan bool, 1)
		w := testutil.Spawn(func() {
			mu.Lock()
			done <- true
			mu.Unlock()
		})
		rep.waitWaits(t, 1)
		mu.Unlock()
		<-done
		require.Nil(t, w.Wait(t))
		rep.checkWaits(t, nil, nil)
		return rep.count()
	}
}

// shortWait: the original drives go-deadlock's timer callback by hand to
// check that a wait that ends (the holder gone) is not reported. Through
// the public API: a wait shorter than the timeout is not reported.
func shortWait(k kit) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 10*time.Second, false)
		mu := k.mutex("mutex", "mu")
		mu.Lock()
		w := testutil.Spawn(func() {
			mu.Lock()
			mu.Unlock()
		})
		k.waitBlocked(t, mu, w, false)
		mu.Unlock()
		require.Nil(t, w.Wait(t))
		return rep.count()
	}
}

// twoWaiters: a read hold (RLock or TryRLock), then writerAndReaderWait.
func twoWaiters(k kit, try bool) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 20*time.Millisecond, true)
		a := k.rw("rwmutex", "a")
		if try {
			require.True(t, a.TryRLock())
		} else {
			a.RLock()
		}
		return writerAndReaderWait(t, k, rep, a)
	}
}

// writerAndReaderWait: the caller holds a for reading; a writer waits for
// it, then a reader waits behind the writer, and each wait is reported.
// The caller's RUnlock then lets both through.
func writerAndReaderWait(t *testing.T, k kit, rep reports, a rwLock) int {
	t.Helper()
	writer := testutil.Spawn(func() {
		a.Lock()
		defer a.Unlock()
	})
	k.waitBlocked(t, a, writer, false)
	reader := testutil.Spawn(func() {
		a.RLock()
		defer a.RUnlock()
	})
	k.waitBlocked(t, a, reader, true)
	rep.waitWaits(t, 2)
	a.RUnlock()
	require.Nil(t, writer.Wait(t))
	require.Nil(t, reader.Wait(t))
	rep.checkWaits(t, writer, reader)
	return rep.count()
}

// heavy is a lock of type L inside a 1 MiB object.
type heavy[L any] struct {
	mu   L
	data [1 << 20]byte
}

// orderMapGC: 50 heavy locks, each taken once under anchor, become
// garbage; the detector must not keep them alive. Retaining more than
// 20 MiB of the 50 counts as one more report. L is lib's mutex type.
func orderMapGC[L any, PL interface {
	*L
	sync.Locker
}](k kit, lib string) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 0, true)
		before := testutil.HeapBaseline()
		anchor := k.mutex("mutex", "anchor")
		for i := range 50 {
			s := &heavy[L]{}
			s.data[0] = byte(i)
			anchor.Lock()
			PL(&s.mu).Lock()
			PL(&s.mu).Unlock()
			anchor.Unlock()
		}
		mib := testutil.RetainedMiB(before)
		t.Logf("%s retains %.1f MiB of 50", lib, mib)
		if mib > 20 {
			return rep.count() + 1
		}
		return rep.count()
	}
}

// lockThenRead takes w, then r for reading, on the calling goroutine, and
// releases both.
func lockThenRead(w sync.Locker, r rwLock) {
	w.Lock()
	r.RLock()
	r.RUnlock()
	w.Unlock()
}

// take acquires a lock with lock, or with tryLock if try, which must then
// succeed (name names it in the panic).
func take(try bool, lock func(), tryLock func() bool, name string) {
	if !try {
		lock()
	} else if !tryLock() {
		panic(name + " failed")
	}
}
