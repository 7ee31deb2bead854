package detect_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// firstAcquisitions are the first acquisitions of fresh locks, one case
// a lock type and mode, and two fresh Mutexes nested: what a test that
// counts the allocations of an operation on a new object runs into.
var firstAcquisitions = []struct {
	name string
	run  func()
}{
	{"mutex.Mutex", func() { m := new(mutex.Mutex); m.Lock(); m.Unlock() }},
	{"monitor.Monitor", func() { m := new(monitor.Monitor); m.Lock(); m.Unlock() }},
	{"mutex.RWMutex/read", func() { m := new(mutex.RWMutex); m.RLock(); m.RUnlock() }},
	{"mutex.RWMutex/write", func() { m := new(mutex.RWMutex); m.Lock(); m.Unlock() }},
	{"monitor.RWMonitor/read", func() { m := new(monitor.RWMonitor); m.RLock(); m.RUnlock() }},
	{"monitor.RWMonitor/write", func() { m := new(monitor.RWMonitor); m.Lock(); m.Unlock() }},
	{"nested-pair", func() {
		a, b := new(mutex.Mutex), new(mutex.Mutex)
		a.Lock()
		b.Lock()
		b.Unlock()
		a.Unlock()
	}},
}

// TestFirstAcquisitionsAllocateNothingInCycles: in Cycles mode (and Off)
// a fresh lock's first acquisitions allocate nothing beyond the lock
// itself (one allocation a lock, two for the nested pair).
func TestFirstAcquisitionsAllocateNothingInCycles(t *testing.T) {
	own := map[string]float64{"nested-pair": 2}
	for _, mode := range []detect.Mode{detect.Off, detect.Cycles} {
		t.Run(mode.String(), func(t *testing.T) {
			defer detect.Configure(detect.WithMode(mode), detect.WithWaitTimeout(0))()
			for _, c := range firstAcquisitions {
				want, ok := own[c.name]
				if !ok {
					want = 1
				}
				assert.Equal(t, want, testing.AllocsPerRun(100, c.run), c.name)
			}
		})
	}
}

// TestFirstAcquisitionsAllocateNothingInOrder: in Order mode a fresh
// lock taken alone gets no detection state (a lone record, see lone.go),
// so its first acquisitions allocate nothing beyond the lock itself,
// counted by testing.AllocsPerRun and by runtime.MemStats (the allocation
// count is process-wide: the count of 200 runs stays at the locks' own);
// and a lock taken alone after it was nested still allocates nothing.
func TestFirstAcquisitionsAllocateNothingInOrder(t *testing.T) {
	if !fastSites {
		t.Skip("without the frame-pointer walk (purego, before go1.23) the fast paths keep no PC, and Order mode makes a lock's state on its first acquisition")
	}
	defer detect.Configure(detect.WithMode(detect.Order), detect.WithWaitTimeout(0))()
	for _, c := range firstAcquisitions {
		if c.name == "nested-pair" {
			continue
		}
		assert.Equal(t, 1.0, testing.AllocsPerRun(100, c.run), c.name)
		c.run() // warm
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		const runs = 200
		for range runs {
			c.run()
		}
		runtime.ReadMemStats(&after)
		assert.LessOrEqual(t, after.Mallocs-before.Mallocs, uint64(runs+runs/20), "%s: MemStats.Mallocs over %d runs", c.name, runs)
	}
	// A lock nested once has its state; alone again, it costs nothing.
	a, b := new(mutex.Mutex), new(mutex.Mutex)
	a.Lock()
	b.Lock()
	b.Unlock()
	a.Unlock()
	assert.Zero(t, testing.AllocsPerRun(100, func() { a.Lock(); a.Unlock(); b.Lock(); b.Unlock() }))
}

// TestFirstNestingAllocatesNothing: in Order mode a fresh pair nested
// costs the calling goroutine nothing beyond the two locks: the nesting
// waits in a slot (nest.go) and the drainer makes the locks' state off
// the calling goroutine. testing.AllocsPerRun runs with one P, where the
// drainer cannot run until the test gives way.
func TestFirstNestingAllocatesNothing(t *testing.T) {
	skipWithoutNests(t)
	defer detect.Configure(detect.WithMode(detect.Order), detect.WithWaitTimeout(0))()
	var pair func()
	for _, c := range firstAcquisitions {
		if c.name == "nested-pair" {
			pair = c.run
		}
	}
	assert.Equal(t, 2.0, testing.AllocsPerRun(100, pair))
}

// BenchmarkOrderFirstAcquisition reports what a fresh lock's first
// acquisitions allocate in each mode, the lock itself included (allocs/op
// 1, 2 for the nested pair, is nothing beyond it): Order mode makes no
// detection state for a lock taken alone (lone.go); a nesting's state is
// made by the drainer goroutine (nest.go), which with several Ps runs
// beside the loop, so its allocations count in allocs/op here and not in
// TestFirstNestingAllocatesNothing's, which runs with one.
//
//	go test -run '^$' -bench OrderFirstAcquisition -benchtime 10000x ./detect
func BenchmarkOrderFirstAcquisition(b *testing.B) {
	for _, mode := range []detect.Mode{detect.Cycles, detect.Order} {
		for _, c := range firstAcquisitions {
			b.Run(mode.String()+"/"+c.name, func(b *testing.B) {
				defer detect.Configure(detect.WithMode(mode), detect.WithWaitTimeout(0))()
				b.ReportAllocs()
				for range b.N {
					c.run()
				}
			})
		}
	}
}
