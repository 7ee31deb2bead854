//go:build unix

// The benchmarks report CPU time, which internal/testkit/cputime measures on unix
// systems only, hence the build constraint; the tests and examples build everywhere.

package condvar_test

import (
	"sync"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/internal/testkit/cputime"
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
			b.ReportAllocs()
			b.ResetTimer()
			cpu := pingPong(l, cv, b.N)
			b.StopTimer()
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkCondPingPongRatio runs the ping-pong through sync.Cond and
// through a condvar.Cond in alternating rounds of pingPongRound round
// trips, and reports the condvar.Cond's CPU time per round trip as a
// multiple of sync.Cond's in the same rounds (x-sync.Cond). On a machine
// shared with other work, load that comes and goes during a run then
// weighs on both alike, which separate sub-benchmarks, seconds apart, do
// not ensure. b.N counts the condvar.Cond's round trips.
func BenchmarkCondPingPongRatio(b *testing.B) {
	for _, c := range []condCase{
		{"sync.Mutex", condvarOn(new(sync.Mutex))},
		{"mutex.Mutex", condvarOn(new(mutex.Mutex))},
		{"monitor.Monitor", condvarOn(new(monitor.Monitor))},
	} {
		b.Run(c.name, func(b *testing.B) {
			mu := new(sync.Mutex)
			base := sync.NewCond(mu)
			l, cv := c.new()
			b.ReportAllocs()
			b.ResetTimer()
			var cpuBase, cpuCond time.Duration
			for done := 0; done < b.N; {
				n := min(pingPongRound, b.N-done)
				cpuBase += pingPong(mu, base, n)
				cpuCond += pingPong(l, cv, n)
				done += n
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuCond.Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(cpuBase.Nanoseconds())/float64(b.N), "sync.Cond-cpu-ns/op")
			b.ReportMetric(float64(cpuCond)/float64(cpuBase), "x-sync.Cond")
		})
	}
}

// pingPongRound is the number of round trips of each side of
// BenchmarkCondPingPongRatio between switches: a few milliseconds, long
// against the goroutine start and the two clock reads of a round.
const pingPongRound = 5000

// pingPong makes n round trips between two goroutines that take turns
// through cv, whose lock is l: each round trip is one Signal and one Wait
// on each side. It returns the process's CPU time spent.
func pingPong(l sync.Locker, cv cond, n int) time.Duration {
	turn := 0 // guarded by l: 1 for the pong side, 0 for the ping side
	done := make(chan struct{})
	cpu0 := cputime.Total()
	go func() {
		defer close(done)
		l.Lock()
		defer l.Unlock()
		for range n {
			for turn != 1 {
				cv.Wait()
			}
			turn = 0
			cv.Signal()
		}
	}()
	l.Lock()
	for range n {
		turn = 1
		cv.Signal()
		for turn != 0 {
			cv.Wait()
		}
	}
	l.Unlock()
	<-done
	return cputime.Total() - cpu0
}
