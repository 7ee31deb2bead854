package bench

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/locksmith-go/locksmith/internal/testkit/cputime"
)

// Result is what one run of a scenario measured.
type Result struct {
	Ops  int64         // operations done: pairs, critical sections, handoffs, items
	Wall time.Duration // elapsed real time
	User time.Duration // user CPU time of the whole process during the run
	Sys  time.Duration // system CPU time of the whole process during the run
}

// CPU returns the user plus system CPU time of r.
func (r Result) CPU() time.Duration { return r.User + r.Sys }

// NsPerOp returns the real time per operation, in nanoseconds.
func (r Result) NsPerOp() float64 { return perOp(r.Wall, r.Ops) }

// CPUNsPerOp returns the CPU time per operation, in nanoseconds: what the
// operation cost all cores together, spinning and scheduling included.
func (r Result) CPUNsPerOp() float64 { return perOp(r.CPU(), r.Ops) }

// OpsPerSec returns operations per second of real time.
func (r Result) OpsPerSec() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Ops) / r.Wall.Seconds()
}

// Cores returns the average number of cores busy during the run.
func (r Result) Cores() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.CPU()) / float64(r.Wall)
}

func perOp(d time.Duration, ops int64) float64 {
	if ops <= 0 {
		return 0
	}
	return float64(d) / float64(ops)
}

// clock brackets a measured run: real time and process CPU time.
type clock struct {
	t0     time.Time
	u0, s0 time.Duration
}

func startClock() clock {
	u, s := cputime.Split()
	return clock{t0: time.Now(), u0: u, s0: s}
}

func (c clock) stop(ops int64) Result {
	wall := time.Since(c.t0)
	u, s := cputime.Split()
	return Result{Ops: ops, Wall: wall, User: u - c.u0, Sys: s - c.s0}
}

// Pairs does n Lock/Unlock pairs on a new lock of l's kind from one
// goroutine. For a Depth above 1 the goroutine first takes Depth-1 holds,
// so that each measured pair is a re-entry at depth Depth. The loop calls
// the concrete type's methods, as a caller of that type would. The caller
// configures l (Lock.Configure).
func Pairs(l Lock, n int) Result {
	lk := l.New()
	enter(lk, l.Depth-1)
	c := startClock()
	l.ops.pairs(lk, n)
	r := c.stop(int64(n))
	leave(lk, l.Depth-1)
	return r
}

// Nested does n rounds of locking two new locks of l's kind, always in the
// same order, and unlocking them in reverse: the simplest program with a
// lock order, which Order mode and go-deadlock both track. Depth is
// ignored. The caller configures l.
func Nested(l Lock, n int) Result {
	a, b := l.New(), l.New()
	c := startClock()
	l.ops.nested(a, b, n)
	return c.stop(int64(n))
}

// Load is a contended workload: goroutines sharing one lock, doing Inside
// work while holding it and Outside work between acquisitions.
type Load struct {
	Goroutines int
	Ops        int // critical sections in all, split evenly between the goroutines
	Inside     Work
	Outside    Work
	// Latency, if set, times every acquisition (the first Lock of a
	// critical section) into Result.Latency, less ClockOverhead. Timing
	// costs two clock reads per operation, so throughput is measured in
	// runs without it.
	Latency bool
}

// ContendedResult is a Result plus, when asked for, the acquisition
// latencies in nanoseconds.
type ContendedResult struct {
	Result
	Latency *hdrhistogram.Histogram
}

// ClockOverhead is what timing an empty interval with time.Now and
// time.Since measures on this machine: the median of 20 rounds of 1000
// back-to-back pairs of clock reads, measured once per process. Contended
// subtracts it from every latency it records, so that the percentile
// table's floor is the lock's cost rather than the clock's; a sample
// shorter than the overhead (the clock's own jitter) is recorded as 0.
func ClockOverhead() time.Duration {
	clockOnce.Do(measureClock)
	return clockOverhead
}

// ClockStep is the smallest non-zero empty interval seen while measuring
// ClockOverhead: about the clock's resolution. A lock acquisition much
// shorter than it reads as 0 or as one step.
func ClockStep() time.Duration {
	clockOnce.Do(measureClock)
	return clockStep
}

var (
	clockOnce     sync.Once
	clockOverhead time.Duration
	clockStep     time.Duration
)

func measureClock() {
	const rounds, per = 20, 1000
	med := make([]time.Duration, 0, rounds)
	for range rounds {
		ds := make([]time.Duration, per)
		for i := range ds {
			t0 := time.Now()
			ds[i] = time.Since(t0)
		}
		slices.Sort(ds)
		med = append(med, ds[per/2])
		for i := 1; i < per; i++ {
			if d := ds[i] - ds[i-1]; d > 0 && (clockStep == 0 || d < clockStep) {
				clockStep = d
			}
		}
	}
	slices.Sort(med)
	clockOverhead = med[rounds/2]
}

// NewLatencyHistogram returns an empty histogram for acquisition
// latencies: 0 ns to 1 min, three significant digits.
func NewLatencyHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, int64(time.Minute), 3)
}

// Contended runs ld on a new lock of l's kind. A critical section takes
// Depth holds (for a Monitor's re-entry variants: a first entry and
// Depth-1 re-entries, as a synchronized method calling synchronized
// helpers does), does the inside work, and releases them. The goroutines
// start together; the clock runs from their start to the last one's end.
//
// The critical section updates a plain variable; if the total at the end
// is not what mutual exclusion gives, Contended returns an error (and the
// race detector, when on, reports the race).
func Contended(l Lock, ld Load) (ContendedResult, error) {
	g := max(1, ld.Goroutines)
	var clock time.Duration
	if ld.Latency {
		clock = ClockOverhead()
	}
	lk := l.New()
	var (
		count  int64  // guarded by lk
		shared uint64 // guarded by lk
		start  = make(chan struct{})
		wg     sync.WaitGroup
		hists  = make([]*hdrhistogram.Histogram, g)
	)
	for i := range g {
		n := ld.Ops / g
		if i < ld.Ops%g {
			n++
		}
		var h *hdrhistogram.Histogram
		if ld.Latency {
			h = NewLatencyHistogram()
			hists[i] = h
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := uint64(i)
			<-start
			for range n {
				var t0 time.Time
				if h != nil {
					t0 = time.Now()
				}
				lk.Lock()
				if h != nil {
					_ = h.RecordValue(max(0, int64(time.Since(t0)-clock)))
				}
				enter(lk, l.Depth-1)
				shared = ld.Inside.Do(shared + local)
				count++
				leave(lk, l.Depth)
				local = ld.Outside.Do(local)
			}
			Sink.Add(local)
		}()
	}
	c := startClock()
	close(start)
	wg.Wait()
	r := ContendedResult{Result: c.stop(int64(ld.Ops))}
	Sink.Add(shared)
	if ld.Latency {
		r.Latency = NewLatencyHistogram()
		for _, h := range hists {
			r.Latency.Merge(h)
		}
	}
	if count != int64(ld.Ops) {
		return r, fmt.Errorf("bench: %s lost updates: %d critical sections counted, %d done", l.Name, count, ld.Ops)
	}
	return r, nil
}
