//go:build unix

// The benchmarks need syscall.Getrusage for CPU time, hence the build
// constraint; the tests and examples build everywhere.

package condvar_test

import (
	"sync"
	"testing"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/internal/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// cond is what the ping-pong needs of a condition variable; sync.Cond and
// condvar.Cond both have it.
type cond interface {
	Wait()
	Signal()
}

// A condCase is one lock and condition variable under benchmark.
type condCase struct {
	name string
	new  func() (sync.Locker, cond)
}

func condvarOn(l sync.Locker) func() (sync.Locker, cond) {
	return func() (sync.Locker, cond) { return l, condvar.New(l) }
}

// BenchmarkCondPingPong measures a round trip between two goroutines that
// take turns through one condition variable: each op is one Signal and one
// Wait on each side. sync.Cond on a sync.Mutex is the baseline.
func BenchmarkCondPingPong(b *testing.B) {
	benchPingPong(b, []condCase{
		{"sync.Cond", func() (sync.Locker, cond) {
			mu := new(sync.Mutex)
			return mu, sync.NewCond(mu)
		}},
		{"condvar.Cond/sync.Mutex", condvarOn(new(sync.Mutex))},
		{"condvar.Cond/mutex.Mutex", condvarOn(new(mutex.Mutex))},
		{"condvar.Cond/monitor.Monitor", condvarOn(new(monitor.Monitor))},
	})
}

func benchPingPong(b *testing.B, cases []condCase) {
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			l, cv := c.new()
			turn := 0 // guarded by l: 1 for the pong side, 0 for the ping side
			done := make(chan struct{})
			go func() {
				defer close(done)
				l.Lock()
				defer l.Unlock()
				for range b.N {
					for turn != 1 {
						cv.Wait()
					}
					turn = 0
					cv.Signal()
				}
			}()
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := testutil.CPUTime()
			l.Lock()
			for range b.N {
				turn = 1
				cv.Signal()
				for turn != 0 {
					cv.Wait()
				}
			}
			l.Unlock()
			<-done
			cpu := testutil.CPUTime() - cpu0
			b.StopTimer()
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
