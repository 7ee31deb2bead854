//go:build unix

package detect_test

import (
	"sync"
	"testing"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/cputime"
	"github.com/locksmith-go/locksmith/mutex"
)

// BenchmarkLonePair is one goroutine's Lock/Unlock (or RLock/RUnlock) of
// one lock while it holds no other, in Cycles and in Order mode, with
// sync.Mutex for scale: what Order mode adds to the acquisitions that
// make up most of a real suite's (bench/cmd/suitecost), worth reading
// under the race detector, where each atomic operation and each field
// access of the bookkeeping is a call into the race runtime. cpu-ns/op is
// the process's CPU time per pair, steadier than ns/op on a shared
// machine.
//
//	go test -race -run '^$' -bench 'LonePair' -count 5 -cpu 1 ./detect/
func BenchmarkLonePair(b *testing.B) {
	m, rw, s := new(mutex.Mutex), new(mutex.RWMutex), new(sync.Mutex)
	kinds := []struct {
		name         string
		modes        []detect.Mode
		lock, unlock func()
	}{
		{"sync.Mutex", []detect.Mode{detect.Cycles}, s.Lock, s.Unlock},
		{"Mutex", []detect.Mode{detect.Cycles, detect.Order}, m.Lock, m.Unlock},
		{"RWMutex/W", []detect.Mode{detect.Cycles, detect.Order}, rw.Lock, rw.Unlock},
		{"RWMutex/R", []detect.Mode{detect.Cycles, detect.Order}, rw.RLock, rw.RUnlock},
	}
	for _, k := range kinds {
		for _, mode := range k.modes {
			b.Run(k.name+"/"+mode.String(), func(b *testing.B) {
				defer detect.Configure(detect.WithMode(mode), detect.WithWaitTimeout(0))()
				k.lock() // the first acquisition records the lock's site
				k.unlock()
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cputime.Total()
				for range b.N {
					k.lock()
					k.unlock()
				}
				b.ReportMetric(float64((cputime.Total()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
