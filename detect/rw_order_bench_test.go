package detect_test

import (
	"sync"
	"testing"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// BenchmarkOrderRWNestedPair: one goroutine takes A then B and releases
// both, the edge known after the first round, in Order mode: what the
// reader rules cost a nesting against a Mutex pair, with sync's types
// (undetected) for scale.
//
//	go test -run '^$' -bench 'OrderRWNestedPair' -count 5 ./detect/
func BenchmarkOrderRWNestedPair(b *testing.B) {
	type pair struct {
		lockA, unlockA, lockB, unlockB func()
	}
	rw := func(a, b interface {
		sync.Locker
		RLock()
		RUnlock()
	}, ra, rb bool) pair {
		p := pair{a.Lock, a.Unlock, b.Lock, b.Unlock}
		if ra {
			p.lockA, p.unlockA = a.RLock, a.RUnlock
		}
		if rb {
			p.lockB, p.unlockB = b.RLock, b.RUnlock
		}
		return p
	}
	cases := []struct {
		name string
		make func() pair
	}{
		{"sync.Mutex", func() pair {
			a, b := new(sync.Mutex), new(sync.Mutex)
			return pair{a.Lock, a.Unlock, b.Lock, b.Unlock}
		}},
		{"sync.RWMutex/RR", func() pair { return rw(new(sync.RWMutex), new(sync.RWMutex), true, true) }},
		{"mutex.Mutex", func() pair {
			a, b := new(mutex.Mutex), new(mutex.Mutex)
			return pair{a.Lock, a.Unlock, b.Lock, b.Unlock}
		}},
		{"mutex.RWMutex/WW", func() pair { return rw(new(mutex.RWMutex), new(mutex.RWMutex), false, false) }},
		{"mutex.RWMutex/RW", func() pair { return rw(new(mutex.RWMutex), new(mutex.RWMutex), true, false) }},
		{"mutex.RWMutex/RR", func() pair { return rw(new(mutex.RWMutex), new(mutex.RWMutex), true, true) }},
		{"mutex.RWMutex/RR-written", func() pair {
			a, b := new(mutex.RWMutex), new(mutex.RWMutex)
			a.Lock() // A write-locked once: the read hold passes the order on
			a.Unlock()
			return rw(a, b, true, true)
		}},
		{"monitor.RWMonitor/RR", func() pair { return rw(new(monitor.RWMonitor), new(monitor.RWMonitor), true, true) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			defer detect.Configure(detect.WithMode(detect.Order), detect.WithWaitTimeout(0))()
			p := c.make()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				p.lockA()
				p.lockB()
				p.unlockB()
				p.unlockA()
			}
		})
	}
}
