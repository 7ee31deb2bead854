package detect_test

import (
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

// BenchmarkOrderFirstAcquisition reports what a fresh lock's first
// acquisitions allocate in each mode, the lock itself included (allocs/op
// 1, 2 for the nested pair, is nothing beyond it): Order mode makes the
// lock's detection state on its first acquisition, whose weak pointer is
// one allocation a lock (see core.Lock.Meta), and a slab of states every
// fifteenth lock.
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
