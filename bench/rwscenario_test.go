package bench_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/bench"
	"github.com/locksmith-go/locksmith/monitor"
)

func TestRWLocksCatalogue(t *testing.T) {
	ls := bench.RWLocks()
	require.NotEmpty(t, ls)
	assert.Equal(t, "sync.RWMutex", ls[0].Name, "sync.RWMutex is the baseline and comes first")
	seen := map[string]bool{}
	for _, l := range ls {
		assert.False(t, seen[l.Name], "duplicate name %s", l.Name)
		seen[l.Name] = true
		assert.True(t, l.RW(), l.Name)
		if l.Depth > 1 {
			assert.True(t, l.Reentrant(), "%s: depth %d needs a reentrant lock", l.Name, l.Depth)
		}
	}
	for _, want := range []string{
		"sync.RWMutex", "go-deadlock.RWMutex",
		"mutex.RWMutex/detect=off", "mutex.RWMutex/detect=cycles", "mutex.RWMutex/detect=order",
		"monitor.RWMonitor/detect=off", "monitor.RWMonitor.depth2/detect=cycles", "monitor.RWMonitor.depth2/detect=order",
	} {
		assert.True(t, seen[want], "missing %s", want)
	}
	for _, l := range bench.Locks() {
		assert.False(t, l.RW(), "%s: the exclusive locks' catalogue has no RW scenarios", l.Name)
	}
}

func TestRWPairs(t *testing.T) {
	noReports(t)
	for _, l := range bench.RWLocks() {
		t.Run(l.Name, func(t *testing.T) {
			defer l.Configure()()
			sane(t, bench.ReadPairs(l, 500), 500)
			sane(t, bench.WritePairs(l, 500), 500)
		})
	}
}

// TestRWPairsReentrant: the depth2 row measures a re-entry (the monitor
// held once beforehand, in the pair's mode) and gives that hold back.
func TestRWPairsReentrant(t *testing.T) {
	for _, l := range bench.RWLocks() {
		if l.Depth < 2 {
			continue
		}
		t.Run(l.Name, func(t *testing.T) {
			defer l.Configure()()
			bench.ReadPairs(l, 10)
			bench.WritePairs(l, 10)
		})
	}
	// What the rows rely on: a re-entrant read and a re-entrant write are
	// allowed and counted.
	var rw monitor.RWMonitor
	rw.RLock()
	rw.RLock()
	assert.Equal(t, 2, rw.ReadHoldCount())
	rw.RUnlock()
	rw.RUnlock()
	rw.Lock()
	rw.Lock()
	assert.Equal(t, 2, rw.WriteHoldCount())
	rw.Unlock()
	rw.Unlock()
}

func TestRWMix(t *testing.T) {
	noReports(t)
	inside := bench.Calibrate(bench.DefaultInside)
	for _, l := range bench.RWLocks() {
		t.Run(l.Name, func(t *testing.T) {
			defer l.Configure()()
			for _, reads := range []int{0, 90, 99, 100} {
				for _, g := range []int{1, 2, 4, 8} {
					r, err := bench.RWMix(l, bench.RWLoad{Goroutines: g, Ops: 403, ReadPercent: reads, Inside: inside, Outside: bench.Work{Iters: 3}})
					require.NoError(t, err, "reads=%d%% goroutines=%d", reads, g)
					sane(t, r, 403)
				}
			}
		})
	}
	_, err := bench.RWMix(bench.RWLocks()[0], bench.RWLoad{Goroutines: 1, Ops: 1, ReadPercent: 101})
	assert.ErrorContains(t, err, "out of 0-100")
}

// brokenRWLock lets every reader and writer in at once: RWMix must notice.
type brokenRWLock struct{ brokenLock }

func (brokenRWLock) RLock()   {}
func (brokenRWLock) RUnlock() {}

func TestRWMixDetectsBrokenLock(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector would (rightly) fail this test")
	}
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two Ps for the critical sections to overlap")
	}
	l := bench.CustomRWLock("broken", func() interface {
		Lock()
		Unlock()
		RLock()
		RUnlock()
	} {
		return brokenRWLock{}
	})
	inside := bench.Calibrate(bench.DefaultInside)
	// Overlaps are likely, not certain; try a few times. Half writes, so
	// that both checks have something to see.
	for range 20 {
		if _, err := bench.RWMix(l, bench.RWLoad{Goroutines: 8, Ops: 100000, ReadPercent: 50, Inside: inside}); err != nil {
			assert.Regexp(t, "lost updates|let a writer in beside a reader", err.Error())
			return
		}
	}
	t.Log("no overlap observed; the checks are not exercised on this run")
}
