package locktest

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// Hammer runs goroutines goroutines on GOMAXPROCS procs, each taking one
// fresh lock of c iters times through lock (and, for a reentrant lock,
// re-entering it once inside, checking the hold count), and checks mutual
// exclusion with plain, unsynchronized variables: the race detector
// reports any overlap of two critical sections, and without it the counts
// catch lost updates. L is c's concrete type, as lock takes it.
//
// Each goroutine counts its rounds, after its Unlock and on a counter of
// its own (testutil.Progress), and the run fails if the rounds stop for
// the liveness deadline: a lost wakeup or a lock never released fails it,
// while a run that a loaded machine slows down passes as long as it
// advances (and ends before nine tenths of the test's -timeout).
func Hammer[L TimedLock](t *testing.T, c Lock, procs, goroutines, iters int, lock func(m L, g, i int)) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	var (
		m       = c.New().(L)
		counter int  // guarded by m
		inside  bool // guarded by m
		overlap int  // guarded by m
		badHold int  // guarded by m
		wg      sync.WaitGroup
		rounds  = testutil.NewProgress(goroutines)
	)
	start := make(chan struct{})
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A panic from lock (it holds nothing then) fails the test
			// instead of killing the test binary; the other goroutines
			// finish their rounds.
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("goroutine %d: lock panicked: %v", g, v)
				}
			}()
			<-start
			for i := range iters {
				lock(m, g, i)
				if c.Reentrant {
					m.Lock()
				}
				if inside {
					overlap++
				}
				if c.Holds(m) != c.depth() {
					badHold++
				}
				inside = true
				counter++
				inside = false
				if c.Reentrant {
					m.Unlock()
				}
				m.Unlock()
				rounds.Step(g)
			}
		}()
	}
	close(start)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	testutil.AwaitProgress(t, done, "hammer", rounds)
	if t.Failed() {
		return
	}
	assert.Equal(t, goroutines*iters, counter)
	assert.Zero(t, overlap)
	assert.Zero(t, badHold)
	assert.False(t, m.Locked())
	assert.Zero(t, c.QueueLen(m))
}

// HammerSweep runs Hammer on c at several GOMAXPROCS and goroutine counts
// (1 proc and 4 goroutines to 4 procs and 16), then once with 2 procs and
// 8 goroutines in every detector mode, which exercises the detector's
// bookkeeping under contention. lock is Hammer's: every way to take the
// lock, in rotation.
func HammerSweep[L TimedLock](t *testing.T, c Lock, lock func(m L, g, i int)) {
	iters := 5000
	if testing.Short() {
		iters = 500
	}
	for _, tc := range []struct{ procs, goroutines int }{
		{1, 4}, {2, 2}, {2, 8}, {4, 16},
	} {
		t.Run(fmt.Sprintf("procs=%d/goroutines=%d", tc.procs, tc.goroutines), func(t *testing.T) {
			Hammer(t, c, tc.procs, tc.goroutines, iters, lock)
		})
	}
	t.Run("modes/procs=2/goroutines=8", func(t *testing.T) {
		ForEachMode(t, func(t *testing.T) { Hammer(t, c, 2, 8, iters/5, lock) })
	})
}
