package stress

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// Primitive indices into round.ops.
const (
	pMutex = iota
	pMonitor
	pCondSync
	pCondMutex
	pCondMonitor
	pRWMutex
	pRWMonitor
	numPrims
)

// round is one round of every workload, on fresh locks.
type round struct {
	cfg Config
	n   int
	an  *anomalies

	ops              [numPrims]atomic.Int64
	signals, wakeups atomic.Int64

	wg    sync.WaitGroup
	ends  []func() // end-of-round checks, run after every goroutine has exited
	endMu sync.Mutex
	seq   atomic.Uint64 // seeds each goroutine's generator

	switches int64 // mode switches made during the round (Config.SwitchModes)

	stranded *strandedSet // Run's: the goroutines the stranding workload left blocked
}

func newRound(cfg Config, n int, an *anomalies) *round {
	return &round{cfg: cfg, n: n, an: an}
}

// run starts every workload and waits for them; it reports false if the
// round hung (an anomaly has been recorded and its goroutines are left).
func (r *round) run() bool {
	stopSwitching := func() int64 { return 0 }
	if r.cfg.SwitchModes {
		stopSwitching = r.switchModes()
	}
	r.mutexExclusion()
	r.monitorReentry()
	for _, k := range []lockKind{kindSync, kindMutex, kindMonitor} {
		r.exactSignal(k)
		r.tokenQueue(k)
	}
	r.orderedNesting()
	r.rwMutexExclusion()
	r.rwMonitorReentry()
	r.readSort()
	r.bubbleSharing()
	r.strandReaders()

	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	timer := time.NewTimer(roundTimeout)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		r.an.addf("round %d did not finish within %v; goroutines:\n%s", r.n+1, roundTimeout, allStacks())
		stopSwitching()
		return false
	}
	r.switches = stopSwitching()
	for _, f := range r.ends {
		f()
	}
	if r.cfg.SwitchModes {
		r.checkDetectorIdle()
	}
	return true
}

func (r *round) addTo(res *Result) {
	for i, name := range allPrimitives() {
		res.Ops[name] += r.ops[i].Load()
	}
	res.Signals += r.signals.Load()
	res.Wakeups += r.wakeups.Load()
	res.ModeSwitches += r.switches
}

// atEnd registers a check to run once every goroutine of the round exited.
func (r *round) atEnd(f func()) {
	r.endMu.Lock()
	r.ends = append(r.ends, f)
	r.endMu.Unlock()
}

// spawn runs f on a new goroutine of the round, with its own random
// generator and operation counters, which it adds to the round's when f
// returns. An unexpected panic is an anomaly.
func (r *round) spawn(name string, f func(w *worker)) {
	w := &worker{r: r, name: name,
		rng: rand.New(rand.NewPCG(r.cfg.Seed, uint64(r.n)<<32|r.seq.Add(1)))}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer func() {
			for i, n := range w.ops {
				r.ops[i].Add(n)
			}
		}()
		defer func() {
			if v := recover(); v != nil {
				r.an.addf("%s: unexpected panic: %v\n%s", name, v, debug.Stack())
			}
		}()
		f(w)
	}()
}

// worker is one goroutine of a workload. Its counters are its own, added
// to the round's when it ends: a shared atomic counter would also add
// synchronization between the goroutines that the locks under test are
// supposed to provide.
type worker struct {
	r    *round
	name string
	rng  *rand.Rand
	ops  [numPrims]int64
}

func (w *worker) op(p int) { w.ops[p]++ }

func (w *worker) anomalyf(format string, args ...any) {
	w.r.an.addf("%s (round %d): %s", w.name, w.r.n+1, fmt.Sprintf(format, args...))
}

// pct reports true with probability p percent.
func (w *worker) pct(p int) bool { return w.rng.IntN(100) < p }

// shortCtx returns a context that is done after a random time of up to
// max: from before the call (0) to well after a typical handoff.
func (w *worker) shortCtx(max time.Duration) (context.Context, context.CancelFunc) {
	switch w.rng.IntN(8) {
	case 0:
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // done before the call
		return ctx, cancel
	case 1:
		return context.WithCancel(context.Background()) // never done
	}
	return context.WithTimeout(context.Background(), time.Duration(w.rng.Int64N(int64(max))))
}

// expectPanic runs f and checks that it panics with an error matching
// sentinel.
func (w *worker) expectPanic(what string, sentinel error, f func()) {
	defer func() {
		v := recover()
		err, ok := v.(error)
		if !ok || !errors.Is(err, sentinel) {
			w.anomalyf("%s: want a panic matching %q, got %v", what, sentinel, v)
		}
	}()
	f()
}

// lockKind is the lock a Cond workload uses.
type lockKind int

const (
	kindSync lockKind = iota
	kindMutex
	kindMonitor
)

func (k lockKind) String() string {
	return [...]string{"*sync.Mutex", "*mutex.Mutex", "*monitor.Monitor"}[k]
}

func (k lockKind) prim() int { return [...]int{pCondSync, pCondMutex, pCondMonitor}[k] }

// kindLock is a lock of some kind with a Cond, taken to a depth (a
// Monitor re-entered depth times, other locks once).
type kindLock struct {
	kind lockKind
	l    sync.Locker
	mu   *mutex.Mutex
	mon  *monitor.Monitor
	c    *condvar.Cond
}

func newKindLock(k lockKind) *kindLock {
	kl := &kindLock{kind: k}
	switch k {
	case kindSync:
		kl.l = new(sync.Mutex)
	case kindMutex:
		kl.mu = new(mutex.Mutex)
		kl.l = kl.mu
	case kindMonitor:
		kl.mon = new(monitor.Monitor)
		kl.l = kl.mon
	}
	kl.c = condvar.New(kl.l)
	return kl
}

// depth returns how many holds a goroutine takes: 1, or 1 to 3 on a
// Monitor.
func (kl *kindLock) depth(w *worker) int {
	if kl.kind == kindMonitor {
		return 1 + w.rng.IntN(3)
	}
	return 1
}

func (kl *kindLock) lock(w *worker, depth int) {
	for range depth {
		kl.l.Lock()
		w.op(kl.kind.prim())
	}
}

func (kl *kindLock) unlock(w *worker, depth int) {
	for range depth {
		kl.l.Unlock()
		w.op(kl.kind.prim())
	}
}

// checkHeld checks that the caller holds the lock depth times, as after
// a Lock or any Cond wait.
func (kl *kindLock) checkHeld(w *worker, depth int, after string) {
	switch kl.kind {
	case kindMutex:
		if !kl.mu.Owned() {
			w.anomalyf("%s: the mutex is not held", after)
		}
	case kindMonitor:
		if h := kl.mon.HoldCount(); h != depth {
			w.anomalyf("%s: HoldCount %d, want %d", after, h, depth)
		}
	}
}

func allStacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		if len(buf) >= 64<<20 {
			return string(buf[:n]) + "\n(truncated)"
		}
		buf = make([]byte, 2*len(buf))
	}
}
