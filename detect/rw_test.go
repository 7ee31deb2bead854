package detect_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/misuse"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// rwLock is what the tests need of both read-write locks.
type rwLock interface {
	sync.Locker
	RLock()
	RUnlock()
	RLockContext(ctx context.Context) error
	LockContext(ctx context.Context) error
	TryRLock() bool
	Readers() int
}

func namedRW(kind, name string) rwLock { return detecttest.Named(kind, name).(rwLock) }

func rwType(kind string) string {
	return map[string]string{"rwmutex": "*mutex.RWMutex", "rwmonitor": "*monitor.RWMonitor"}[kind]
}

// TestDeadlockRWWriterPreference is the cycle that only writer preference
// closes, which no detector that ignores readers finds: G1 holds R(A), G2
// holds R(B), G3 waits for W(A) (for G1 to leave), G4 waits for W(B) (for
// G2), G1 waits for R(B), queued behind G4, and G2's R(A), queued behind
// G3, closes the cycle. G2 must get the *DeadlockError at once, in the
// order G2 -> G3 -> G1 -> G4, with each access named; its deferred
// RUnlock then frees everyone.
func TestDeadlockRWWriterPreference(t *testing.T) {
	for _, mode := range []detect.Mode{detect.Cycles, detect.Order} {
		for _, kind := range []string{"rwmutex", "rwmonitor"} {
			for _, ctxWait := range []bool{false, true} {
				t.Run(fmt.Sprintf("%v/%s/context=%v", mode, kind, ctxWait), func(t *testing.T) {
					rec := detecttest.Configure(t, detect.WithMode(mode))
					a, b := namedRW(kind, "A"), namedRW(kind, "B")
					held := make(chan struct{}, 2)
					next1, next2 := make(chan struct{}), make(chan struct{})
					g1 := testutil.Spawn(func() {
						a.RLock()
						defer a.RUnlock()
						held <- struct{}{}
						<-next1
						b.RLock()
						b.RUnlock()
					})
					var g2err error
					g2 := testutil.Spawn(func() {
						b.RLock()
						defer b.RUnlock()
						held <- struct{}{}
						<-next2
						if ctxWait {
							g2err = a.RLockContext(context.Background())
							if g2err == nil {
								a.RUnlock()
							}
							return
						}
						a.RLock()
						a.RUnlock()
					})
					testutil.Await(t, held, "G1 reading")
					testutil.Await(t, held, "G2 reading")
					g3 := testutil.Spawn(func() { a.Lock(); a.Unlock() })
					detecttest.WaitParked(t, a, g3.ID(t))
					g4 := testutil.Spawn(func() { b.Lock(); b.Unlock() })
					detecttest.WaitParked(t, b, g4.ID(t))
					close(next1)
					detecttest.WaitParked(t, b, g1.ID(t))
					close(next2)

					var de *detect.DeadlockError
					if ctxWait {
						require.Nil(t, g2.Wait(t))
						de = detecttest.DeadlockError(t, g2err)
					} else {
						de = detecttest.DeadlockError(t, g2.Wait(t))
					}
					for i, p := range []*testutil.Proc{g1, g3, g4} {
						require.Nil(t, p.Wait(t), "goroutine %d", i)
					}
					reps := rec.All()
					require.Len(t, reps, 1, "%s", rec)
					r := reps[0]
					require.Same(t, r, de.Report)
					require.Len(t, r.Steps, 4, "%s", r)
					type want struct {
						g                 int64
						holds, waits      string
						holdsRead, waitsR bool
					}
					for i, w := range []want{
						{g2.G, "B", "A", true, true},   // G2 holds R(B), wants R(A), held by G3 (writer)
						{g3.G, "A", "A", false, false}, // G3 holds A's writer lock, wants the readers gone
						{g1.G, "A", "B", true, true},   // G1 holds R(A), wants R(B), held by G4 (writer)
						{g4.G, "B", "B", false, false}, // G4 holds B's writer lock, waits for G2
					} {
						s := r.Steps[i]
						assert.Equal(t, w.g, s.Goroutine, "step %d", i)
						assert.Equal(t, w.holds, detecttest.LockName(s.Holds), "step %d holds", i)
						assert.Equal(t, w.waits, detecttest.LockName(s.WaitsFor), "step %d waits for", i)
						assert.Equal(t, w.holdsRead, s.HoldsForReading, "step %d holds for reading", i)
						assert.Equal(t, w.waitsR, s.WaitsForReading, "step %d waits for reading", i)
						assert.Equal(t, rwType(kind), s.WaitsFor.Type)
						assert.True(t, s.WaitsFor.ReadWrite)
					}
					assert.Equal(t, 1, r.Steps[0].WaitsFor.Readers, "A's readers when reported")
					str := r.String()
					assert.Contains(t, str, fmt.Sprintf("goroutine %d:\n  holds \"B\" (%s 0x", g2.G, rwType(kind)))
					assert.Contains(t, str, "  waiting to lock \"A\" ("+rwType(kind))
					assert.Equal(t, []bool{false, true, false, true}, []bool{r.Steps[0].Queued, r.Steps[1].Queued, r.Steps[2].Queued, r.Steps[3].Queued}, "the writers are queued")
					assert.Contains(t, str, fmt.Sprintf(") for reading,\n  behind goroutine %d, a writer queued on it (readers: 1)\n", g3.G))
					assert.Contains(t, str, fmt.Sprintf("goroutine %d:\n  waiting to lock \"A\" (%s 0x", g3.G, rwType(kind)))
					assert.Contains(t, str, fmt.Sprintf(") for writing, queued ahead of new readers,\n  which is held for reading by goroutine %d (readers: 1)\n", g1.G))
					assert.NotContains(t, str, fmt.Sprintf("goroutine %d:\n  holds", g3.G), "a queued writer holds nothing yet")
					assert.Contains(t, de.Error(), fmt.Sprintf("goroutine %d waits for A for reading behind writer goroutine %d", g2.G, g3.G))
					assert.Contains(t, de.Error(), fmt.Sprintf("goroutine %d waits for A for writing held for reading by goroutine %d", g3.G, g1.G))
					assert.Zero(t, a.Readers()+b.Readers())
				})
			}
		}
	}
}

// TestDeadlockRWReaderAndWriter: G1 holds R(A) and waits for W(B); G2
// holds W(B) and asks for W(A), which must wait for G1 to leave. Either
// can close the cycle: G1 queued on B's writer lock, or G2 waiting for
// A's readers. The closer is refused; when it is the draining writer, its
// hold on A's writer lock is given up, so the reader is not left blocked.
func TestDeadlockRWReaderAndWriter(t *testing.T) {
	for _, kind := range []string{"rwmutex", "rwmonitor"} {
		for _, closer := range []string{"reader", "drainer"} {
			t.Run(kind+"/"+closer, func(t *testing.T) {
				rec := detecttest.Configure(t, detect.WithMode(detect.Cycles))
				a, b := namedRW(kind, "A"), namedRW(kind, "B")
				held := make(chan struct{}, 2)
				next1, next2 := make(chan struct{}), make(chan struct{})
				var g2LockErr error
				g1 := testutil.Spawn(func() {
					a.RLock()
					defer a.RUnlock()
					held <- struct{}{}
					<-next1
					b.Lock()
					b.Unlock()
				})
				g2 := testutil.Spawn(func() {
					b.Lock()
					defer b.Unlock()
					held <- struct{}{}
					<-next2
					g2LockErr = a.LockContext(context.Background())
					if g2LockErr == nil {
						a.Unlock()
					}
				})
				testutil.Await(t, held, "G1")
				testutil.Await(t, held, "G2")
				var victim, other *testutil.Proc
				if closer == "drainer" {
					close(next1)
					detecttest.WaitParked(t, b, g1.ID(t))
					close(next2)
					victim, other = g2, g1
				} else {
					close(next2)
					detecttest.WaitParked(t, a, g2.ID(t))
					close(next1)
					victim, other = g1, g2
				}
				vv := victim.Wait(t)
				require.Nil(t, other.Wait(t))
				var de *detect.DeadlockError
				if closer == "drainer" {
					require.Nil(t, vv)
					de = detecttest.DeadlockError(t, g2LockErr)
				} else {
					de = detecttest.DeadlockError(t, vv)
					require.NoError(t, g2LockErr)
				}
				require.Len(t, de.Report.Steps, 2)
				require.Len(t, rec.All(), 1)
				for _, s := range de.Report.Steps {
					if s.Goroutine == g1.G {
						assert.True(t, s.HoldsForReading, "G1 holds A for reading")
						assert.False(t, s.WaitsForReading, "G1 waits to write B")
					} else {
						assert.False(t, s.HoldsForReading, "G2 holds B for writing")
						assert.False(t, s.WaitsForReading, "G2 waits to write A")
					}
				}
				assert.Zero(t, detect.OwnerOf(a), "A's writer lock given up")
				assert.Zero(t, detect.OwnerOf(b))
				assert.Zero(t, a.Readers()+b.Readers())
			})
		}
	}
}

// TestNoReportRWConsistent: many goroutines reading and writing two
// read-write locks in a consistent order (A before B), RWMonitor readers
// re-entering while writers wait, in Cycles mode: no deadlock exists, so
// any report is a false positive.
func TestNoReportRWConsistent(t *testing.T) {
	for _, mode := range []detect.Mode{detect.Cycles, detect.Order} {
		for _, kind := range []string{"rwmutex", "rwmonitor"} {
			t.Run(fmt.Sprintf("%v/%s", mode, kind), func(t *testing.T) {
				rec := detecttest.Configure(t, detect.WithMode(mode))
				a, b := namedRW(kind, "A"), namedRW(kind, "B")
				iters := 400
				if testing.Short() {
					iters = 100
				}
				var wg sync.WaitGroup
				for i := range 12 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						rng := rand.New(rand.NewPCG(uint64(i), 7))
						for range iters {
							lockA, lockB := a.RLock, b.RLock
							unA, unB := a.RUnlock, b.RUnlock
							if rng.IntN(4) == 0 {
								lockA, unA = a.Lock, a.Unlock
							}
							if rng.IntN(4) == 0 {
								lockB, unB = b.Lock, b.Unlock
							}
							lockA()
							lockB()
							if kind == "rwmonitor" && rng.IntN(2) == 0 {
								b.RLock() // re-entrant: passes a waiting writer
								b.RUnlock()
							}
							unB()
							unA()
						}
					}()
				}
				wg.Wait()
				assert.Empty(t, rec.All(detect.Deadlock, detect.LockOrder), "%s", rec)
			})
		}
	}
}

// TestOrderRWRules: in Order mode write acquisitions of read-write locks
// make lock-order edges like a Mutex's (the rules for read acquisitions
// are tested in rw_order_test.go).
func TestOrderRWRules(t *testing.T) {
	t.Run("write inversion is reported", func(t *testing.T) {
		rec := detecttest.Configure(t, detect.WithMode(detect.Order))
		a, b := namedRW("rwmutex", "A"), namedRW("rwmonitor", "B")
		a.Lock()
		b.Lock()
		b.Unlock()
		a.Unlock()
		assert.True(t, detect.HasEdge(a, b))
		b.Lock()
		a.Lock()
		a.Unlock()
		b.Unlock()
		reps := rec.All(detect.LockOrder)
		require.Len(t, reps, 1, "%s", rec)
		assert.Contains(t, reps[0].String(), "*mutex.RWMutex")
	})
}

// TestDumpAndDOTShowRWAccess: a reader holds A, a writer waits for it to
// leave, and a second reader waits behind the writer: Dump and WriteDOT
// say who wants which access and who holds the lock how.
func TestDumpAndDOTShowRWAccess(t *testing.T) {
	for _, mode := range []detect.Mode{detect.Cycles, detect.Order} {
		t.Run(mode.String(), func(t *testing.T) {
			detecttest.Configure(t, detect.WithMode(mode))
			a := namedRW("rwmonitor", "A")
			me := testutil.GoroutineID()
			a.RLock()
			w := testutil.Spawn(func() { a.Lock(); a.Unlock() })
			detecttest.WaitParked(t, a, w.ID(t))
			r := testutil.Spawn(func() { a.RLock(); a.RUnlock() })
			detecttest.WaitParked(t, a, r.ID(t))

			var buf bytes.Buffer
			detect.Dump(&buf)
			d := buf.String()
			t.Logf("Dump:\n%s", d)
			assert.Regexp(t, fmt.Sprintf(`(?m)^  goroutine %d waiting \S+ to lock "A" \(\*monitor\.RWMonitor 0x[0-9a-f]+\) for writing \(it holds out new readers\), held for reading by 1 goroutine\(s\): goroutine %d$`, w.G, me), d)
			assert.Regexp(t, fmt.Sprintf(`(?m)^  goroutine %d waiting \S+ to lock "A" \(\*monitor\.RWMonitor 0x[0-9a-f]+\) for reading, behind writer goroutine %d, queued on it \(readers: 1\)$`, r.G, w.G), d)
			if mode == detect.Order {
				assert.Regexp(t, fmt.Sprintf(`(?s)goroutine %d holds:\n    "A" \(\*monitor\.RWMonitor 0x[0-9a-f]+\) for reading \(readers: 1\)\n`, me), d)
			}

			buf.Reset()
			require.NoError(t, detect.WriteDOT(&buf))
			dot := buf.String()
			t.Logf("DOT:\n%s", dot)
			checkDOT(t, dot)
			id := detect.LockID(a)
			assert.Contains(t, dot, fmt.Sprintf("\tG%d -> L%d [style=dashed,label=\"waits for writing\"];\n", w.G, id))
			assert.Contains(t, dot, fmt.Sprintf("\tL%d -> G%d [style=bold,label=\"held for reading by\"];\n", id, me))
			assert.Contains(t, dot, fmt.Sprintf("\tG%d -> L%d [style=dashed,label=\"waits for reading\"];\n", r.G, id))
			assert.Contains(t, dot, fmt.Sprintf("\tL%d -> G%d [style=bold,label=\"queued for writing by\"];\n", id, w.G))

			a.RUnlock()
			require.Nil(t, w.Wait(t))
			require.Nil(t, r.Wait(t))
		})
	}
}

func TestSetNameRW(t *testing.T) {
	var rw mutex.RWMutex
	detect.SetName(rw.RLocker(), "through RLocker")
	assert.Equal(t, detect.LockID(&rw), detect.LockID(rw.RLocker()), "RLocker names the lock itself")
	var mon monitor.RWMonitor
	detect.SetName(&mon, "mon")
}

// TestDeadlockRWMonitorCondReacquire: a goroutine waiting on an
// RWMonitor's condition with two write holds and a read hold, while
// holding a Mutex x, is cancelled; its reacquire would wait for the
// goroutine that took the write lock meanwhile and waits for x: the
// reacquire is refused. The wait panics without the lock, and the holds
// it lost make exactly three failed unlocks (one RUnlock, two Unlocks)
// panic with the deadlock attached; a fourth is a plain misuse.
func TestDeadlockRWMonitorCondReacquire(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Cycles))
	rw := namedRW("rwmonitor", "rw").(*monitor.RWMonitor)
	x := detecttest.Named("mutex", "x").(*mutex.Mutex)
	c := rw.NewCond()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	parked := make(chan struct{})
	type result struct {
		wait       any
		lost       []any
		extra      any
		owned      bool
		readOwned  bool
		writeHolds int
	}
	res := make(chan result, 1)
	w := testutil.Spawn(func() {
		x.Lock()
		defer x.Unlock()
		rw.Lock()
		rw.Lock()
		rw.RLock()
		close(parked)
		var r result
		r.wait = testutil.Catch(func() { _ = c.WaitContext(ctx) })
		r.owned, r.readOwned, r.writeHolds = rw.Owned(), rw.ReadOwned(), rw.WriteHoldCount()
		r.lost = []any{testutil.Catch(rw.RUnlock), testutil.Catch(rw.Unlock), testutil.Catch(rw.Unlock)}
		r.extra = testutil.Catch(rw.Unlock)
		res <- r
	})
	<-parked
	testutil.WaitFor(t, "waiter parked on the condition", func() bool { return c.Waiters() == 1 })
	b := testutil.Spawn(func() {
		rw.Lock() // free: the wait released every hold
		defer rw.Unlock()
		x.Lock() // parks: the waiter holds x
		x.Unlock()
	})
	detecttest.WaitParked(t, x, b.ID(t))
	cancel() // the waiter's reacquire now closes the cycle
	r := testutil.Await(t, res, "waiter")
	require.Nil(t, w.Wait(t))
	require.Nil(t, b.Wait(t))

	de := detecttest.DeadlockError(t, r.wait)
	assert.Equal(t, w.G, de.Report.Steps[0].Goroutine)
	assert.False(t, r.owned, "the refused wait holds no write lock")
	assert.False(t, r.readOwned, "nor a read lock")
	assert.Zero(t, r.writeHolds)
	for i, v := range r.lost {
		err, ok := v.(error)
		require.Truef(t, ok, "unlock %d: %#v", i, v)
		assert.ErrorIs(t, err, detect.ErrDeadlock, "unlock %d carries the deadlock", i)
		assert.ErrorIs(t, err, monitor.ErrNotOwner, "unlock %d", i)
		assert.Contains(t, err.Error(), "could not retake")
		var me *misuse.Error
		if assert.ErrorAs(t, err, &me, "unlock %d", i) {
			assert.Equal(t, w.G, me.Goroutine, "unlock %d: the goroutine that lost the holds", i)
			assert.Equal(t, monitor.ErrNotOwner, me.Err)
			assert.ErrorIs(t, me.Cause, detect.ErrDeadlock, "unlock %d: Cause is the refused retake", i)
		}
	}
	err, ok := r.extra.(error)
	require.True(t, ok)
	assert.ErrorIs(t, err, monitor.ErrNotOwner)
	assert.NotErrorIs(t, err, detect.ErrDeadlock, "only the lost holds carry the deadlock")
	require.Len(t, rec.All(detect.Deadlock), 1, "%s", rec)
	assert.Zero(t, detect.OwnerOf(rw))
	assert.Zero(t, rw.Readers())
}

// TestOrderReporterFailureLeavesRWLockFree: a LockOrder reporter that
// panics or ends the goroutine during an RW lock's write acquisition must
// not leave the write lock held: the acquisition is undone through the
// RW lock's own Unlock.
func TestOrderReporterFailureLeavesRWLockFree(t *testing.T) {
	for _, kind := range []string{"rwmutex", "rwmonitor"} {
		for _, ex := range reporterExits {
			t.Run(kind+"/"+ex.name, func(t *testing.T) {
				rec := failingReporter(t, detect.LockOrder, ex.exit)
				a := detecttest.Named("mutex", "a")
				b := namedRW(kind, "b")
				b.Lock()
				a.Lock()
				a.Unlock()
				b.Unlock()
				p := testutil.Spawn(func() {
					a.Lock()
					defer a.Unlock()
					b.Lock() // the inversion: reported, and the reporter fails
					b.Unlock()
				})
				p.Wait(t)
				require.Len(t, rec.All(detect.LockOrder), 1, "%s", rec)
				assert.Zero(t, detect.OwnerOf(a), "a left free")
				assert.Zero(t, detect.OwnerOf(b), "b's write lock left free")
				q := testutil.Spawn(func() {
					b.RLock()
					b.RUnlock()
					b.Lock()
					b.Unlock()
				})
				require.Nil(t, q.Wait(t))
			})
		}
	}
}

// TestWaitTimeoutRWAccess: a writer waiting for two readers to leave is
// reported with both readers as holders, for reading; a reader waiting
// behind it names the writer.
func TestWaitTimeoutRWAccess(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Cycles), detect.WithWaitTimeout(waitTimeout))
	a := namedRW("rwmutex", "A")
	me := testutil.GoroutineID()
	a.RLock()
	held := make(chan struct{})
	release := make(chan struct{})
	other := testutil.Spawn(func() {
		a.RLock()
		close(held)
		<-release
		a.RUnlock()
	})
	testutil.Await(t, held, "second reader")
	w := testutil.Spawn(func() { a.Lock(); a.Unlock() })
	detecttest.WaitParked(t, a, w.ID(t))
	r := testutil.Spawn(func() { a.RLock(); a.RUnlock() })
	detecttest.WaitParked(t, a, r.ID(t))
	reps := rec.WaitN(t, detect.WaitTimeout, 2)
	var wrep, rrep *detect.Report
	for _, rep := range reps {
		switch rep.Steps[0].Goroutine {
		case w.G:
			wrep = rep
		case r.G:
			rrep = rep
		}
	}
	require.NotNil(t, wrep, "%s", rec)
	require.NotNil(t, rrep, "%s", rec)
	require.Len(t, wrep.Steps, 3, "the writer waits for both readers")
	assert.False(t, wrep.Steps[0].WaitsForReading)
	holders := []int64{wrep.Steps[1].Goroutine, wrep.Steps[2].Goroutine}
	assert.ElementsMatch(t, []int64{me, other.ID(t)}, holders)
	assert.True(t, wrep.Steps[1].HoldsForReading && wrep.Steps[2].HoldsForReading)
	s := wrep.String()
	assert.Contains(t, s, ") for writing,\nwhich is held for reading by goroutine ")
	assert.Contains(t, s, "\nand is held for reading by goroutine ")
	require.Len(t, rrep.Steps, 2)
	assert.True(t, rrep.Steps[0].WaitsForReading)
	assert.Equal(t, w.G, rrep.Steps[1].Goroutine)
	assert.False(t, rrep.Steps[1].HoldsForReading)
	assert.Contains(t, rrep.String(), fmt.Sprintf(") for reading,\nwhich is held for writing by goroutine %d\n", w.G))

	a.RUnlock()
	close(release)
	require.Nil(t, w.Wait(t))
	require.Nil(t, r.Wait(t))
	require.Nil(t, other.Wait(t))
}
