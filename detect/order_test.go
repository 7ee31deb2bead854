package detect_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// checkOrderReport checks a LockOrder report for the cycle of lock names
// want (want[0] -> want[1] -> ... -> want[0]), closed by the last step.
func checkOrderReport(t *testing.T, r *detect.Report, closer int64, want ...string) {
	t.Helper()
	require.Equal(t, detect.LockOrder, r.Kind)
	require.Len(t, r.Steps, len(want), "%s", r)
	// The last step is the closing acquisition: it holds the lock that the
	// cycle reaches last and acquires the first one of the existing chain.
	last := r.Steps[len(r.Steps)-1]
	assert.Equal(t, closer, last.Goroutine)
	for i, s := range r.Steps {
		assert.Equal(t, detecttest.LockName(s.WaitsFor), detecttest.LockName(r.Steps[(i+1)%len(r.Steps)].Holds), "step %d links to step %d", i, i+1)
		_, ok := detecttest.OwnFrame(s.Stack, ownPrefix)
		assert.True(t, ok, "step %d stack %v shows the test's frames", i, s.Stack)
	}
	var got []string
	for _, s := range r.Steps {
		got = append(got, detecttest.LockName(s.Holds))
	}
	// Compare as cycles: rotate got to start where want starts.
	for i := range got {
		if got[i] == want[0] {
			got = append(got[i:], got[:i]...)
			break
		}
	}
	assert.Equal(t, want, got, "%s", r)
}

// TestOrderInversion: the two halves of an inversion, a then b and later b
// then a, are reported once as a LockOrder, whether they run in two
// goroutines (one after the other: this run never came near a deadlock)
// or in one; nothing hangs and execution continues.
func TestOrderInversion(t *testing.T) {
	for _, sameGoroutine := range []bool{false, true} {
		for _, kinds := range [][2]string{{"mutex", "mutex"}, {"monitor", "mutex"}, {"monitor", "monitor"}} {
			t.Run(fmt.Sprintf("sameGoroutine=%v/%s-%s", sameGoroutine, kinds[0], kinds[1]), func(t *testing.T) {
				rec := detecttest.Configure(t, detect.WithMode(detect.Order))
				a, b := detecttest.Named(kinds[0], "a"), detecttest.Named(kinds[1], "b")
				var first, second int64
				if sameGoroutine {
					first = testutil.OnOtherOK(t, func() {
						lockPair(a, b)
						lockPair(b, a)
					})
					second = first
				} else {
					first = testutil.OnOtherOK(t, func() { lockPair(a, b) })
					require.Empty(t, rec.All())
					second = testutil.OnOtherOK(t, func() { lockPair(b, a) })
				}
				reps := rec.All()
				require.Len(t, reps, 1, "%s", rec)
				checkOrderReport(t, reps[0], second, "a", "b")
				assert.Equal(t, first, reps[0].Steps[0].Goroutine, "the existing edge's goroutine")
				s := reps[0].String()
				assert.Contains(t, s, "possible circular locking dependency detected")
				assert.Contains(t, s, fmt.Sprintf("goroutine %d is trying to acquire lock:", second))
				// Both orders again, any number of times: no second report.
				for range 10 {
					lockPair(a, b)
					lockPair(b, a)
				}
				assert.Len(t, rec.All(), 1)
			})
		}
	}
}

// TestOrderLongCycles: cycles of length 3 and more, each edge taken by its
// own goroutine, are reported when the last edge closes them, not before,
// with every edge of the cycle in the report.
func TestOrderLongCycles(t *testing.T) {
	for _, n := range []int{3, 4, 7} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(detect.Order))
			locks := make([]sync.Locker, n)
			names := make([]string, n)
			for i := range locks {
				names[i] = fmt.Sprintf("L%d", i)
				locks[i] = detecttest.Named([]string{"mutex", "monitor"}[i%2], names[i])
			}
			for i := 0; i < n-1; i++ {
				testutil.OnOtherOK(t, func() { lockPair(locks[i], locks[i+1]) })
			}
			require.Empty(t, rec.All(), "a chain is not a cycle")
			closer := testutil.OnOtherOK(t, func() { lockPair(locks[n-1], locks[0]) })
			reps := rec.All()
			require.Len(t, reps, 1, "%s", rec)
			checkOrderReport(t, reps[0], closer, names...)
		})
	}
}

// TestOrderEachCycleOnce: many goroutines repeating the same inversion
// concurrently produce one report; a different cycle produces its own.
func TestOrderEachCycleOnce(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	a, b, c := detecttest.Named("mutex", "a"), detecttest.Named("mutex", "b"), detecttest.Named("mutex", "c")
	lockPair(a, b)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				lockPair(b, a) // consistent among themselves: no real deadlock
			}
		}()
	}
	wg.Wait()
	require.Len(t, rec.All(), 1, "%s", rec)
	assert.Equal(t, detect.Seen{Times: 1, Locks: 2, Goroutines: 2}, rec.All()[0].Seen(),
		"the inversion was made once (later acquisitions b -> a add no edge)")
	// The same inversion (the same call sites) over other lock instances
	// is the same problem, counted.
	x, y := detecttest.Named("mutex", "x"), detecttest.Named("mutex", "y")
	lockPair(x, y)
	lockPair(y, x)
	require.Len(t, rec.All(), 1, "%s", rec)
	assert.Equal(t, detect.Seen{Times: 2, Locks: 4, Goroutines: 2}, rec.All()[0].Seen(), "the test goroutine and the one that closed the first")
	// Another inversion, at other call sites, is another problem.
	b.Lock()
	c.Lock()
	c.Unlock()
	b.Unlock()
	c.Lock()
	b.Lock()
	b.Unlock()
	c.Unlock()
	require.Len(t, rec.All(), 2, "%s", rec)
	checkOrderReport(t, rec.All()[1], testutil.GoroutineID(), "b", "c")
	// a -> b -> c -> ... c -> a closes a third, longer cycle.
	lockPair(c, a)
	require.Len(t, rec.All(), 3, "%s", rec)
}

// TestOrderTryLock: a TryLock adds no edge into the lock it tries (it
// cannot block), but locks taken while holding it do; a failed TryLock
// changes nothing, in particular not what the real holder is known to
// hold.
func TestOrderTryLock(t *testing.T) {
	for _, kind := range []string{"mutex", "monitor"} {
		t.Run(kind, func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(detect.Order))
			x, y, z := detecttest.Named(kind, "x"), detecttest.Named(kind, "y"), detecttest.Named(kind, "z")
			tryLock := func(l sync.Locker) bool { return l.(interface{ TryLock() bool }).TryLock() }

			// x then TryLock(y): no edge x -> y, so y then x is fine.
			x.Lock()
			require.True(t, tryLock(y))
			y.Unlock()
			x.Unlock()
			assert.False(t, detect.HasEdge(x, y), "no edge into a try-locked lock")
			lockPair(y, x)
			assert.True(t, detect.HasEdge(y, x))
			assert.Empty(t, rec.All(), "%s", rec)

			// TryLock(y) then z: the edge y -> z is recorded ...
			require.True(t, tryLock(y))
			z.Lock()
			z.Unlock()
			y.Unlock()
			assert.True(t, detect.HasEdge(y, z), "locks taken while holding a try-locked lock add edges")
			assert.Empty(t, rec.All(), "%s", rec)
			// ... so z then y is an inversion.
			lockPair(z, y)
			require.Len(t, rec.All(), 1, "%s", rec)
			checkOrderReport(t, rec.All()[0], testutil.GoroutineID(), "y", "z")

			// p -> q exists; q then TryLock(p) would close p -> q -> p
			// if a TryLock were an edge: it is not, so no report, while
			// q then Lock(p) is one.
			p, q := detecttest.Named(kind, "p"), detecttest.Named(kind, "q")
			lockPair(p, q)
			q.Lock()
			require.True(t, tryLock(p))
			p.Unlock()
			q.Unlock()
			assert.False(t, detect.HasEdge(q, p))
			assert.Len(t, rec.All(), 1, "TryLock closing a cycle is not a report\n%s", rec)
			lockPair(q, p)
			require.Len(t, rec.All(), 2, "%s", rec)
			checkOrderReport(t, rec.All()[1], testutil.GoroutineID(), "p", "q")
		})
	}
}

// TestOrderFailedTryLockKeepsHolder: another goroutine's failed TryLock on
// a held lock does not erase the holder's record (go-deadlock's
// postUnlock does): the holder's next acquisition still records an edge.
func TestOrderFailedTryLockKeepsHolder(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	a, b := detecttest.Named("mutex", "a").(*mutex.Mutex), detecttest.Named("mutex", "b")
	a.Lock()
	testutil.OnOtherOK(t, func() { assert.False(t, a.TryLock()) })
	b.Lock()
	b.Unlock()
	a.Unlock()
	assert.True(t, detect.HasEdge(a, b))
	testutil.OnOtherOK(t, func() { lockPair(b, a) })
	require.Len(t, rec.All(), 1, "%s", rec)
}

// TestOrderLockContext: LockContext can block, so it adds edges like Lock.
func TestOrderLockContext(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	a := detecttest.Named("mutex", "a").(*mutex.Mutex)
	b := detecttest.Named("monitor", "b").(*monitor.Monitor)
	ctx := context.Background()
	a.Lock()
	require.NoError(t, b.LockContext(ctx))
	b.Unlock()
	a.Unlock()
	assert.True(t, detect.HasEdge(a, b))
	b.Lock()
	require.NoError(t, a.LockContext(ctx))
	a.Unlock()
	b.Unlock()
	require.Len(t, rec.All(), 1, "%s", rec)
	checkOrderReport(t, rec.All()[0], testutil.GoroutineID(), "a", "b")
}

// TestOrderUnlockOutOfOrder: after releasing locks out of order, the edge
// of a new acquisition goes from the nearest lock still held, and the
// order it implies with the locks held below that one follows by
// transitivity.
func TestOrderUnlockOutOfOrder(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	a, b, c, d := detecttest.Named("mutex", "a"), detecttest.Named("mutex", "b"), detecttest.Named("mutex", "c"), detecttest.Named("mutex", "d")
	a.Lock()
	b.Lock()
	c.Lock()
	b.Unlock() // out of order
	d.Lock()
	assert.True(t, detect.HasEdge(c, d), "from the nearest held lock")
	assert.False(t, detect.HasEdge(a, d), "only from the nearest held lock")
	assert.True(t, detect.HasPath(a, d), "a -> b -> c -> d")
	assert.False(t, detect.HasEdge(b, d), "b was released")
	d.Unlock()
	a.Unlock() // out of order
	c.Unlock()
	assert.Empty(t, rec.All(), "%s", rec)
	assert.Empty(t, detect.OrderConsistent())
}

// TestOrderNearestLockFindsInversions: with edges only from the nearest
// held lock, an inversion of a and b is still found when other locks are
// held between them, in either half, and the report runs through them.
func TestOrderNearestLockFindsInversions(t *testing.T) {
	for _, between := range []struct{ first, second int }{{1, 0}, {0, 1}, {2, 3}} {
		t.Run(fmt.Sprintf("between=%d,%d", between.first, between.second), func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(detect.Order))
			a, b := detecttest.Named("mutex", "a"), detecttest.Named("monitor", "b")
			var want []string
			nest := func(outer, inner sync.Locker, outerName string, n int, prefix string) {
				want = append(want, outerName)
				var mid []sync.Locker
				outer.Lock()
				for i := range n {
					l := detecttest.Named("mutex", fmt.Sprintf("%s%d", prefix, i))
					want = append(want, fmt.Sprintf("%s%d", prefix, i))
					l.Lock()
					mid = append(mid, l)
				}
				inner.Lock()
				inner.Unlock()
				for i := len(mid) - 1; i >= 0; i-- {
					mid[i].Unlock()
				}
				outer.Unlock()
			}
			testutil.OnOtherOK(t, func() { nest(a, b, "a", between.first, "x") })
			require.Empty(t, rec.All())
			closer := testutil.OnOtherOK(t, func() { nest(b, a, "b", between.second, "y") })
			reps := rec.All()
			require.Len(t, reps, 1, "%s", rec)
			checkOrderReport(t, reps[0], closer, want...)
			assert.Empty(t, detect.OrderConsistent())
		})
	}
}

// TestOrderModeSwitchWhileHolding: a goroutine that takes locks in Order
// mode and releases them while the detector is in another mode leaves no
// stale record behind that would create edges from locks it no longer
// holds. A program that always takes b before a is never reported.
func TestOrderModeSwitchWhileHolding(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	a, b := detecttest.Named("mutex", "a"), detecttest.Named("mutex", "b")
	testutil.OnOtherOK(t, func() {
		b.Lock()
		a.Lock()
		restore := detect.Configure(detect.WithMode(detect.Cycles))
		a.Unlock() // not seen by Order mode
		b.Unlock()
		restore()
		b.Lock() // a is not held: no edge a -> b
		a.Lock()
		a.Unlock()
		b.Unlock()
	})
	assert.False(t, detect.HasEdge(a, b), "edge from a lock released while Order mode was off")
	assert.Empty(t, rec.All(), "%s", rec)
}

// TestStressConsistentOrder: many goroutines take many locks, Mutexes and
// Monitors, by Lock, LockContext and TryLock, with re-entry, out-of-order
// releases, always acquiring (blocking) in one global order: no report in
// any mode.
func TestStressConsistentOrder(t *testing.T) {
	const (
		goroutines = 16
		nlocks     = 24
	)
	iters := 1500
	switch {
	case testing.Short():
		iters = 200
	case raceEnabled:
		iters = 500
	}
	for _, mode := range []detect.Mode{detect.Off, detect.Cycles, detect.Order} {
		t.Run(mode.String(), func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(mode), detect.WithWaitTimeout(detect.DefaultOrderWaitTimeout))
			locks := make([]sync.Locker, nlocks)
			for i := range locks {
				if i%3 == 0 {
					locks[i] = new(monitor.Monitor)
				} else {
					locks[i] = new(mutex.Mutex)
				}
			}
			ctx := context.Background()
			var wg sync.WaitGroup
			for w := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 42))
					var heldIdx []int
					for range iters {
						// Take 1..4 locks in increasing index order.
						next := rng.IntN(nlocks / 2)
						for len(heldIdx) < 4 && next < nlocks {
							l := locks[next]
							switch rng.IntN(4) {
							case 0:
								if l.(interface{ TryLock() bool }).TryLock() {
									heldIdx = append(heldIdx, next)
								}
							case 1:
								if err := l.(interface {
									LockContext(context.Context) error
								}).LockContext(ctx); err != nil {
									panic(err)
								}
								heldIdx = append(heldIdx, next)
							default:
								l.Lock()
								heldIdx = append(heldIdx, next)
							}
							if m, ok := l.(*monitor.Monitor); ok && m.Owned() && rng.IntN(2) == 0 {
								m.Lock() // re-entry
								m.Unlock()
							}
							next += 1 + rng.IntN(5)
						}
						// Release in a random order.
						rng.Shuffle(len(heldIdx), func(i, j int) { heldIdx[i], heldIdx[j] = heldIdx[j], heldIdx[i] })
						for _, i := range heldIdx {
							locks[i].Unlock()
						}
						heldIdx = heldIdx[:0]
					}
				}()
			}
			wg.Wait()
			assert.Empty(t, rec.All(), "%s", rec)
		})
	}
}

// TestOrderRandomAgainstModel nests random pairs of locks, one goroutine
// at a time, and checks the detector against a model that keeps every
// edge that agrees with the edges before it: an acquisition is reported
// exactly when the model has a path back from the new lock to the held
// one, the graph's positions agree with every edge in the order, and
// paths between locks survive the collection of the locks between them
// (bypass edges).
func TestOrderRandomAgainstModel(t *testing.T) {
	const nlocks = 40
	rounds := 600
	if testing.Short() {
		rounds = 200
	}
	for seed := range uint64(4) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(detect.Order))
			rng := rand.New(rand.NewPCG(seed, 7))
			locks := make([]sync.Locker, nlocks)
			for i := range locks {
				locks[i] = detecttest.Named([]string{"mutex", "monitor"}[i%2], fmt.Sprintf("L%d", i))
			}
			model := map[[2]int]bool{} // edges in the order
			reach := func(from, to int, alive func(int) bool) bool {
				seen := map[int]bool{from: true}
				for queue := []int{from}; len(queue) > 0; queue = queue[1:] {
					for e := range model {
						if e[0] == queue[0] && !seen[e[1]] && alive(e[1]) {
							if e[1] == to {
								return true
							}
							seen[e[1]] = true
							queue = append(queue, e[1])
						}
					}
				}
				return false
			}
			all := func(int) bool { return true }
			nest := func(a, b int) {
				before := len(rec.All())
				cycle := !model[[2]int{a, b}] && reach(b, a, all)
				lockPair(locks[a], locks[b])
				if got := len(rec.All()) - before; cycle {
					assert.LessOrEqual(t, got, 1, "%d -> %d", a, b)
				} else {
					assert.Zero(t, got, "%d -> %d closes no cycle\n%s", a, b, rec)
					model[[2]int{a, b}] = true
				}
			}
			for range rounds {
				a, b := rng.IntN(nlocks), rng.IntN(nlocks)
				if a != b {
					nest(a, b)
				}
			}
			require.Empty(t, detect.OrderConsistent())
			for range 200 {
				a, b := rng.IntN(nlocks), rng.IntN(nlocks)
				if a != b {
					require.Equal(t, reach(a, b, all), detect.HasPath(locks[a], locks[b]), "path %d ->* %d", a, b)
				}
			}

			// Collect the odd locks: paths between the even ones remain.
			want := map[[2]int]bool{}
			for a := 0; a < nlocks; a += 2 {
				for b := 0; b < nlocks; b += 2 {
					if a != b {
						want[[2]int{a, b}] = reach(a, b, all)
					}
				}
			}
			var collected atomic.Int32
			for i := 1; i < nlocks; i += 2 {
				onCollect(t, locks[i], &collected)
				locks[i] = nil
			}
			waitForGC(t, "odd locks collected", func() bool { return collected.Load() == nlocks/2 })
			waitForGC(t, "odd locks forgotten", func() bool { return detect.ReadStats().Nodes <= nlocks/2+1 })
			require.Empty(t, detect.OrderConsistent())
			for e, ok := range want {
				require.Equal(t, ok, detect.HasPath(locks[e[0]], locks[e[1]]), "path %d ->* %d after collection", e[0], e[1])
			}
			// The model now has the even locks only, with the bypasses.
			even := map[[2]int]bool{}
			for e, ok := range want {
				if ok {
					even[e] = true
				}
			}
			model = even
			for range rounds / 2 {
				a, b := 2*rng.IntN(nlocks/2), 2*rng.IntN(nlocks/2)
				if a != b {
					nest(a, b)
				}
			}
			require.Empty(t, detect.OrderConsistent())
		})
	}
}

// lockPair takes a then b on the calling goroutine and releases both. It
// is this package's own function: the detector names a problem by its
// first frame outside the library, which a helper under internal/ is not.
func lockPair(a, b sync.Locker) {
	a.Lock()
	b.Lock()
	b.Unlock()
	a.Unlock()
}
