package stress

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// errBoom is what the workloads panic with on purpose.
var errBoom = errors.New("stress: deliberate panic")

// mutexExclusion: goroutines take one Mutex by Lock, TryLock and
// LockContext (with contexts done before the call, during the wait, or
// never), and misuse it now and then.
func (r *round) mutexExclusion() {
	var (
		m        mutex.Mutex
		counter  int          // guarded by m: the race detector's witness
		inside   atomic.Int32 // goroutines inside the critical section
		expected atomic.Int64 // increments of counter
	)
	for g := range r.cfg.Goroutines {
		r.spawn(fmt.Sprintf("mutex exclusion #%d", g), func(w *worker) {
			for range r.cfg.Ops {
				got := false
				switch x := w.rng.IntN(100); {
				case x < 40:
					m.Lock()
					got = true
				case x < 55:
					got = m.TryLock()
				case x < 85:
					ctx, cancel := w.shortCtx(50 * time.Microsecond)
					err := m.LockContext(ctx)
					cancel()
					got = err == nil
					if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
						w.anomalyf("LockContext: unexpected error %v", err)
					}
				case x < 90:
					// A panic under a deferred Unlock releases the mutex.
					func() {
						defer func() {
							if v := recover(); v != errBoom {
								w.anomalyf("panic under deferred Unlock: recovered %v", v)
							}
						}()
						m.Lock()
						defer m.Unlock()
						w.op(pMutex)
						panic(errBoom)
					}()
					w.op(pMutex)
					if m.Owned() {
						w.anomalyf("mutex still held after a panic under a deferred Unlock")
					}
					continue
				case x < 94:
					// Unlock by a goroutine that does not hold it.
					w.expectPanic("Unlock by a non-owner", mutex.ErrNotOwner, m.Unlock)
					w.op(pMutex)
					continue
				default:
					// Recursive Lock: panics and leaves the mutex held.
					m.Lock()
					w.op(pMutex)
					w.expectPanic("recursive Lock", mutex.ErrRecursiveLock, m.Lock)
					got = true
				}
				w.op(pMutex)
				if m.Owned() != got {
					w.anomalyf("Owned() = %v after an acquisition that reported %v", !got, got)
				}
				if !got {
					continue
				}
				if n := inside.Add(1); n != 1 {
					w.anomalyf("mutual exclusion: %d goroutines inside", n)
				}
				counter++
				if w.pct(10) {
					runtime.Gosched() // hold it a little longer
				}
				inside.Add(-1)
				m.Unlock()
				w.op(pMutex)
				expected.Add(1)
			}
		})
	}
	r.atEnd(func() {
		if int64(counter) != expected.Load() {
			r.an.addf("mutex exclusion (round %d): counter %d, %d increments", r.n+1, counter, expected.Load())
		}
		if m.Locked() {
			r.an.addf("mutex exclusion (round %d): the mutex is still held after every goroutine ended", r.n+1)
		}
	})
}

// monitorReentry: goroutines take one Monitor to random depths by Lock,
// TryLock and LockContext, check the hold count at every level, and panic
// inside Do now and then.
func (r *round) monitorReentry() {
	var (
		m        monitor.Monitor
		counter  int
		inside   atomic.Int32
		expected atomic.Int64
	)
	for g := range r.cfg.Goroutines {
		r.spawn(fmt.Sprintf("monitor re-entry #%d", g), func(w *worker) {
			for range r.cfg.Ops {
				got := false
				switch x := w.rng.IntN(100); {
				case x < 45:
					m.Lock()
					got = true
				case x < 60:
					got = m.TryLock()
				default:
					ctx, cancel := w.shortCtx(50 * time.Microsecond)
					got = m.LockContext(ctx) == nil
					cancel()
				}
				w.op(pMonitor)
				if h := m.HoldCount(); h != 0 && !got || h != 1 && got {
					w.anomalyf("HoldCount %d after an acquisition that reported %v", h, got)
				}
				if !got {
					continue
				}
				if n := inside.Add(1); n != 1 {
					w.anomalyf("mutual exclusion: %d goroutines inside", n)
				}
				depth := 1 + w.rng.IntN(4)
				for d := 2; d <= depth; d++ {
					// Re-entry never blocks, whatever the method and context.
					switch w.rng.IntN(3) {
					case 0:
						m.Lock()
					case 1:
						if !m.TryLock() {
							w.anomalyf("TryLock by the owner failed")
						}
					case 2:
						ctx, cancel := context.WithCancel(context.Background())
						cancel()
						if err := m.LockContext(ctx); err != nil {
							w.anomalyf("LockContext by the owner with a done context: %v", err)
						}
					}
					w.op(pMonitor)
					if h := m.HoldCount(); h != d {
						w.anomalyf("re-entry: HoldCount %d, want %d", h, d)
					}
				}
				counter++
				if w.pct(10) {
					// A panic inside Do gives back the hold Do took.
					func() {
						defer func() {
							if v := recover(); v != errBoom {
								w.anomalyf("panic inside Do: recovered %v", v)
							}
						}()
						m.Do(func() { panic(errBoom) })
					}()
					w.op(pMonitor)
					if h := m.HoldCount(); h != depth {
						w.anomalyf("after a panic inside Do: HoldCount %d, want %d", h, depth)
					}
				}
				if w.pct(5) {
					// Unlock, Wait and Notify by a goroutine that does not
					// hold the monitor panic and change nothing.
					done := make(chan struct{})
					go func() {
						defer close(done)
						w.expectPanic("Unlock by a non-owner", monitor.ErrNotOwner, m.Unlock)
						w.expectPanic("Notify by a non-owner", monitor.ErrNotOwner, m.Notify)
						w.expectPanic("WaitTimeout by a non-owner", monitor.ErrNotOwner, func() { m.WaitTimeout(time.Hour) })
					}()
					<-done
					w.ops[pMonitor] += 3
					if h := m.HoldCount(); h != depth {
						w.anomalyf("after misuse by another goroutine: HoldCount %d, want %d", h, depth)
					}
				}
				inside.Add(-1)
				for d := depth; d >= 1; d-- {
					m.Unlock()
					w.op(pMonitor)
					if h := m.HoldCount(); h != d-1 {
						w.anomalyf("Unlock: HoldCount %d, want %d", h, d-1)
					}
				}
				expected.Add(1)
			}
		})
	}
	r.atEnd(func() {
		if int64(counter) != expected.Load() {
			r.an.addf("monitor re-entry (round %d): counter %d, %d increments", r.n+1, counter, expected.Load())
		}
		if m.Locked() {
			r.an.addf("monitor re-entry (round %d): the monitor is still held after every goroutine ended", r.n+1)
		}
	})
}

// exactSignal checks that every Signal wakes exactly one waiter while
// other waiters' timeouts and cancellations race it.
//
// The protocol: an anchor goroutine waits with Wait (no timeout) and is
// queued whenever the signaller signals; flaky goroutines wait with short
// timeouts and contexts, some of which the signaller cancels right before
// or right after its Signal. The signaller signals only once the previous
// Signal has been consumed (wakeups == signals) and the anchor is queued.
// So a Signal always finds a waiter, and if the waiter it chooses gives up
// at the same moment, the signal must be passed on to another (at worst
// the anchor, which never gives up): each Signal ends exactly one wait as
// signalled. A wakeup with no Signal, or a Signal that wakes nobody within
// the liveness bound, is an anomaly.
func (r *round) exactSignal(k lockKind) {
	kl := newKindLock(k)
	p := k.prim()
	// Guarded by kl.l:
	var (
		signals, wakeups int64
		anchorIn, stop   bool
		cancels          = make([]context.CancelFunc, r.cfg.Goroutines) // of flaky waiters' contexts, by flaky
	)
	name := "exact signal on " + k.String()
	check := func(w *worker) {
		if wakeups > signals {
			w.anomalyf("%d wakeups for %d signals: a wakeup without a Signal", wakeups, signals)
		}
	}

	r.spawn(name+" anchor", func(w *worker) {
		depth := kl.depth(w)
		kl.lock(w, depth)
		for !stop {
			anchorIn = true
			kl.c.Wait()
			w.op(p)
			anchorIn = false
			kl.checkHeld(w, depth, "Wait")
			if !stop {
				wakeups++
				check(w)
			}
		}
		kl.unlock(w, depth)
	})

	for g := range r.cfg.Goroutines {
		r.spawn(fmt.Sprintf("%s flaky #%d", name, g), func(w *worker) {
			for {
				depth := kl.depth(w)
				kl.lock(w, depth)
				if stop {
					kl.unlock(w, depth)
					return
				}
				var signalled bool
				switch w.rng.IntN(4) {
				case 0:
					signalled = kl.c.WaitTimeout(time.Duration(w.rng.Int64N(int64(100 * time.Microsecond))))
				case 1:
					ctx, cancel := w.shortCtx(100 * time.Microsecond)
					signalled = kl.c.WaitContext(ctx) == nil
					cancel()
				default:
					// A context the signaller may cancel, racing its own Signal.
					ctx, cancel := context.WithCancel(context.Background())
					cancels[g] = cancel
					signalled = kl.c.WaitContext(ctx) == nil
					cancels[g] = nil
					cancel()
				}
				w.op(p)
				kl.checkHeld(w, depth, "a timed or cancellable wait")
				if signalled && !stop {
					wakeups++
					check(w)
				}
				kl.unlock(w, depth)
				if w.pct(30) {
					runtime.Gosched() // now and then, nobody flaky is queued
				}
			}
		})
	}

	r.spawn(name+" signaller", func(w *worker) {
		defer func() {
			kl.l.Lock()
			stop = true
			kl.c.Broadcast() // releases the anchor and the flaky waiters
			w.op(p)
			kl.l.Unlock()
		}()
		for range r.cfg.Ops {
			if !waitUntil(kl.l, func() bool { return wakeups == signals && anchorIn }) {
				kl.l.Lock()
				w.anomalyf("Signal %d woke nobody within %v (%d wakeups, anchor queued %v, %d waiting)",
					signals, liveness, wakeups, anchorIn, kl.c.Waiters())
				kl.l.Unlock()
				return
			}
			// The lock is held, the previous Signal consumed, the anchor queued.
			cancelSome := func() {
				if i := w.rng.IntN(len(cancels)); cancels[i] != nil {
					cancels[i]()
				}
			}
			if w.pct(30) {
				cancelSome()
			}
			kl.c.Signal()
			w.op(p)
			signals++
			if w.pct(30) {
				cancelSome()
			}
			kl.l.Unlock()
		}
		if !waitUntil(kl.l, func() bool { return wakeups == signals }) {
			w.anomalyf("the last Signal woke nobody within %v", liveness)
			return
		}
		kl.l.Unlock()
	})

	r.atEnd(func() {
		r.signals.Add(signals)
		r.wakeups.Add(wakeups)
		if signals != wakeups {
			r.an.addf("%s (round %d): %d signals, %d wakeups", name, r.n+1, signals, wakeups)
		}
	})
}

// waitUntil locks l and polls cond, unlocking between looks, until cond
// holds (it returns true with l held) or the liveness bound passes (it
// returns false with l unlocked).
func waitUntil(l sync.Locker, cond func() bool) bool {
	deadline := time.Now().Add(liveness)
	for {
		l.Lock()
		if cond() {
			return true
		}
		l.Unlock()
		if time.Now().After(deadline) {
			return false
		}
		runtime.Gosched()
	}
}

// tokenQueue: producers add tokens and Signal or Broadcast; consumers take
// them, patiently (WaitWhile) or impatiently (a timed or cancellable wait,
// giving up when it ends unsignalled, without looking at the tokens). At
// every point where a goroutine holds the lock it checks that no wakeup was
// lost: if a waiter is still queued, every token is matched by a waiter
// already woken (tokens <= inWait - Waiters()).
func (r *round) tokenQueue(k lockKind) {
	kl := newKindLock(k)
	p := k.prim()
	name := "token queue on " + k.String()
	const producers = 2
	// Guarded by kl.l:
	var (
		tokens, produced, consumed int
		inWait                     int // goroutines between calling and returning from a wait
		stop                       bool
	)
	invariant := func(w *worker, where string) {
		if q := kl.c.Waiters(); q > 0 && tokens > inWait-q {
			w.anomalyf("lost wakeup (%s): %d tokens, %d waiters queued, %d woken", where, tokens, q, inWait-q)
		}
	}
	var producing sync.WaitGroup
	producing.Add(producers)
	for g := range producers {
		r.spawn(fmt.Sprintf("%s producer #%d", name, g), func(w *worker) {
			defer producing.Done()
			for range r.cfg.Ops / 2 {
				depth := kl.depth(w)
				kl.lock(w, depth)
				invariant(w, "producer")
				n := 1 + w.rng.IntN(3)
				tokens += n
				produced += n
				if w.pct(25) {
					kl.c.Broadcast()
					w.op(p)
				} else {
					for range n {
						kl.c.Signal()
						w.op(p)
					}
				}
				invariant(w, "after signalling")
				kl.unlock(w, depth)
				if w.pct(50) {
					runtime.Gosched()
				}
			}
		})
	}
	r.spawn(name+" closer", func(w *worker) {
		producing.Wait()
		kl.l.Lock()
		stop = true
		kl.c.Broadcast()
		w.op(p)
		kl.l.Unlock()
	})
	for g := range r.cfg.Goroutines {
		r.spawn(fmt.Sprintf("%s consumer #%d", name, g), func(w *worker) {
			for {
				depth := kl.depth(w)
				kl.lock(w, depth)
				invariant(w, "consumer")
				gaveUp := false
				if tokens == 0 && !stop {
					inWait++
					switch w.rng.IntN(3) {
					case 0:
						kl.c.WaitWhile(func() bool {
							w.op(p)
							invariant(w, "WaitWhile")
							return tokens == 0 && !stop
						})
					case 1:
						gaveUp = !kl.c.WaitTimeout(time.Duration(w.rng.Int64N(int64(200 * time.Microsecond))))
						w.op(p)
					case 2:
						ctx, cancel := w.shortCtx(200 * time.Microsecond)
						gaveUp = kl.c.WaitContext(ctx) != nil
						w.op(p)
						cancel()
					}
					// Still counted as woken: it has yet to take its token.
					invariant(w, "after a wait")
					inWait--
					kl.checkHeld(w, depth, "a wait")
				}
				switch {
				case gaveUp:
					// Impatient: it leaves on a timeout without looking at
					// the tokens, which a lost wakeup would then strand.
				case tokens > 0:
					tokens--
					consumed++
				case stop:
					kl.unlock(w, depth)
					return
				}
				invariant(w, "leaving")
				kl.unlock(w, depth)
			}
		})
	}
	r.atEnd(func() {
		if produced != consumed || tokens != 0 {
			r.an.addf("%s (round %d): %d produced, %d consumed, %d left", name, r.n+1, produced, consumed, tokens)
		}
	})
}

// orderedNesting: goroutines take up to three locks, always in the order
// a (Mutex) < b (Monitor, re-entered now and then) < c (Mutex), by Lock,
// TryLock and LockContext, and wait on b's condition while holding a. The
// order is consistent, so the detector must report nothing.
func (r *round) orderedNesting() {
	var (
		a, c       mutex.Mutex
		b          monitor.Monitor
		cb         = b.NewCond()
		na, nb, nc int // guarded by a, b, c
		ea, eb, ec atomic.Int64
		insideA    atomic.Int32
	)
	for g := range r.cfg.Goroutines {
		r.spawn(fmt.Sprintf("ordered nesting #%d", g), func(w *worker) {
			acquire := func(l interface {
				Lock()
				TryLock() bool
				LockContext(context.Context) error
			}, p int) bool {
				defer w.op(p)
				switch w.rng.IntN(3) {
				case 0:
					l.Lock()
					return true
				case 1:
					return l.TryLock()
				}
				ctx, cancel := w.shortCtx(100 * time.Microsecond)
				defer cancel()
				return l.LockContext(ctx) == nil
			}
			for range r.cfg.Ops {
				takeA, takeB, takeC := w.pct(60), w.pct(60), w.pct(60)
				var gotA, gotB, gotC bool
				if takeA && acquire(&a, pMutex) {
					gotA = true
					if insideA.Add(1) != 1 {
						w.anomalyf("mutual exclusion on a")
					}
					na++
					ea.Add(1)
				}
				holdsB := 0
				if takeB && acquire(&b, pMonitor) {
					gotB = true
					holdsB = 1
					nb++
					eb.Add(1)
					if w.pct(30) {
						b.Lock() // re-entry: no edge, never a report
						w.op(pMonitor)
						holdsB++
					}
					switch {
					case gotA && w.pct(10):
						// Wait on b's condition holding a: the reacquire of b
						// is an edge a -> b, the consistent one.
						cb.WaitTimeout(time.Duration(w.rng.Int64N(int64(50 * time.Microsecond))))
						w.op(pCondMonitor)
						if h := b.HoldCount(); h != holdsB {
							w.anomalyf("HoldCount %d after a wait, want %d", h, holdsB)
						}
					case w.pct(20):
						cb.Signal()
						w.op(pCondMonitor)
					}
				}
				if takeC && acquire(&c, pMutex) {
					gotC = true
					nc++
					ec.Add(1)
				}
				if gotC {
					c.Unlock()
					w.op(pMutex)
				}
				if gotB {
					for range holdsB {
						b.Unlock()
						w.op(pMonitor)
					}
				}
				if gotA {
					insideA.Add(-1)
					a.Unlock()
					w.op(pMutex)
				}
			}
		})
	}
	r.atEnd(func() {
		if int64(na) != ea.Load() || int64(nb) != eb.Load() || int64(nc) != ec.Load() {
			r.an.addf("ordered nesting (round %d): counters %d %d %d, increments %d %d %d",
				r.n+1, na, nb, nc, ea.Load(), eb.Load(), ec.Load())
		}
		if a.Locked() || b.Locked() || c.Locked() {
			r.an.addf("ordered nesting (round %d): a lock is still held after every goroutine ended", r.n+1)
		}
	})
}
