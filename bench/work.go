package bench

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Work is a fixed amount of CPU work, the Go counterpart of JMH's
// Blackhole.consumeCPU: a loop of dependent integer operations that the
// compiler cannot remove, sized by calibration to take a given time on
// this machine. It neither sleeps nor touches memory, so it costs the same
// inside a critical section as outside one.
type Work struct {
	// Iters is the number of loop rounds; the zero Work does nothing.
	Iters int
	// Target is the duration the calibration aimed for.
	Target time.Duration
}

// Default amounts of work for the contended scenarios: about 100 ns inside
// the lock, as in Jetty's JMH runs, and a little outside it, so that a
// goroutine comes back to the lock at once but not in the same instant it
// left it.
const (
	DefaultInside  = 100 * time.Nanosecond
	DefaultOutside = 25 * time.Nanosecond
)

// Do performs w, mixing seed into the result. Callers fold the result into
// state they keep, so that the work cannot be optimised away.
func (w Work) Do(seed uint64) uint64 { return spin(seed|1, w.Iters) }

// spin does n rounds of xorshift64 on x.
//
//go:noinline
func spin(x uint64, n int) uint64 {
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// Sink receives results of Work so that the compiler keeps them.
var Sink atomic.Uint64

var nsPerIter = sync.OnceValue(func() float64 {
	// The best of many short timings: interference (preemption by other
	// processes, a busy sibling core) only ever makes a timing longer, so
	// the minimum is the machine's speed, and short timings are likelier
	// to fall between interruptions. A machine whose speed changes during
	// a run (frequency scaling, a noisy neighbour) still skews the work;
	// lockbench prints the iteration count so that runs can be compared.
	const n = 1 << 16
	best := time.Duration(math.MaxInt64)
	for range 31 {
		t := time.Now()
		Sink.Add(spin(uint64(t.UnixNano())|1, n))
		best = min(best, time.Since(t))
		runtime.Gosched()
	}
	return float64(best) / n
})

// Calibrate returns a Work that takes about d on this machine. The loop's
// speed is measured once per process; a d <= 0 returns the zero Work.
func Calibrate(d time.Duration) Work {
	if d <= 0 {
		return Work{}
	}
	return Work{Iters: max(1, int(math.Round(float64(d)/nsPerIter()))), Target: d}
}
