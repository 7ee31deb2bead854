package stress

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// rwGuard checks a read-write lock's exclusion: writers against writers
// and readers. Each side counts itself in while it holds the lock; a
// writer also increments a plain counter (the race detector's witness).
type rwGuard struct {
	name     string
	readers  atomic.Int32
	writers  atomic.Int32
	counter  int // guarded by the lock's write side
	expected atomic.Int64
}

func (g *rwGuard) read(w *worker) {
	g.readers.Add(1)
	if n := g.writers.Load(); n != 0 {
		w.anomalyf("a reader inside beside %d writer(s)", n)
	}
	if w.pct(10) {
		runtime.Gosched() // read a little longer, beside other readers
	}
	g.readers.Add(-1)
}

func (g *rwGuard) write(w *worker) {
	if n := g.writers.Add(1); n != 1 {
		w.anomalyf("mutual exclusion: %d writers inside", n)
	}
	if n := g.readers.Load(); n != 0 {
		w.anomalyf("a writer inside beside %d reader(s)", n)
	}
	g.counter++
	if w.pct(10) {
		runtime.Gosched()
	}
	g.writers.Add(-1)
	g.expected.Add(1)
}

func (g *rwGuard) check(r *round, locked bool, readers int) {
	if int64(g.counter) != g.expected.Load() {
		r.an.addf("%s (round %d): counter %d, %d increments", g.name, r.n+1, g.counter, g.expected.Load())
	}
	if locked || readers != 0 {
		r.an.addf("%s (round %d): locked %v with %d readers after every goroutine ended", g.name, r.n+1, locked, readers)
	}
}

// ctxErr checks that a failed context acquisition returned the context's
// error.
func ctxErr(w *worker, what string, err error) {
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		w.anomalyf("%s: unexpected error %v", what, err)
	}
}

// rwMutexExclusion: goroutines read and write one RWMutex by every
// acquisition method (contexts done before the call, during the wait or
// never), and misuse it now and then: a recursive RLock and a
// read-to-write upgrade panic with ErrRecursiveLock and leave the read
// hold as it was; an RUnlock without a read hold panics with ErrNotOwner.
func (r *round) rwMutexExclusion() {
	var rw mutex.RWMutex
	g := &rwGuard{name: "rwmutex exclusion"}
	for n := range r.cfg.Goroutines {
		r.spawn(fmt.Sprintf("%s #%d", g.name, n), func(w *worker) {
			for range r.cfg.Ops {
				x := w.rng.IntN(100)
				if x >= 90 {
					rw.RLock()
					switch {
					case x < 94:
						w.expectPanic("recursive RLock", mutex.ErrRecursiveLock, rw.RLock)
					case x < 98:
						w.expectPanic("read-to-write upgrade", mutex.ErrRecursiveLock, rw.Lock)
					default:
						done := make(chan struct{})
						go func() {
							defer close(done)
							w.expectPanic("RUnlock without a read hold", mutex.ErrNotOwner, rw.RUnlock)
						}()
						<-done
					}
					if !rw.ReadOwned() || rw.Owned() {
						w.anomalyf("after misuse: ReadOwned %v, Owned %v; want a reader", rw.ReadOwned(), rw.Owned())
					}
					rw.RUnlock()
					w.ops[pRWMutex] += 3
					continue
				}
				read, got := x < 55, false
				switch {
				case x < 30, x >= 55 && x < 70:
					if read {
						rw.RLock()
					} else {
						rw.Lock()
					}
					got = true
				case x < 40, x >= 70 && x < 75:
					if read {
						got = rw.TryRLock()
					} else {
						got = rw.TryLock()
					}
				default:
					ctx, cancel := w.shortCtx(50 * time.Microsecond)
					var err error
					if read {
						err = rw.RLockContext(ctx)
					} else {
						err = rw.LockContext(ctx)
					}
					cancel()
					ctxErr(w, "a context acquisition", err)
					got = err == nil
				}
				w.op(pRWMutex)
				if rw.ReadOwned() != (got && read) || rw.Owned() != (got && !read) {
					w.anomalyf("ReadOwned %v, Owned %v after a %s acquisition that reported %v",
						rw.ReadOwned(), rw.Owned(), map[bool]string{true: "read", false: "write"}[read], got)
				}
				if !got {
					continue
				}
				if read {
					g.read(w)
					rw.RUnlock()
				} else {
					g.write(w)
					rw.Unlock()
				}
				w.op(pRWMutex)
			}
		})
	}
	r.atEnd(func() { g.check(r, rw.Locked(), rw.Readers()) })
}

// rwMonitorReentry: goroutines read and write one RWMonitor to random
// depths by every acquisition method, write-lock and read-lock inside a
// write, downgrade, and misuse it now and then (a read-to-write upgrade
// panics with ErrUpgrade and keeps the read hold; TryLock by a reader
// fails), checking both hold counts at every step.
func (r *round) rwMonitorReentry() {
	var rw monitor.RWMonitor
	g := &rwGuard{name: "rwmonitor re-entry"}
	holds := func(w *worker, wantW, wantR int, after string) {
		if hw, hr := rw.WriteHoldCount(), rw.ReadHoldCount(); hw != wantW || hr != wantR {
			w.anomalyf("%s: holds %d write, %d read; want %d, %d", after, hw, hr, wantW, wantR)
		}
	}
	// first takes a first hold, read or write, by a random method.
	first := func(w *worker, read bool) bool {
		w.op(pRWMonitor)
		switch w.rng.IntN(4) {
		case 0:
			if read {
				return rw.TryRLock()
			}
			return rw.TryLock()
		case 1:
			ctx, cancel := w.shortCtx(50 * time.Microsecond)
			defer cancel()
			var err error
			if read {
				err = rw.RLockContext(ctx)
			} else {
				err = rw.LockContext(ctx)
			}
			ctxErr(w, "a context acquisition", err)
			return err == nil
		}
		if read {
			rw.RLock()
		} else {
			rw.Lock()
		}
		return true
	}
	for n := range r.cfg.Goroutines {
		r.spawn(fmt.Sprintf("%s #%d", g.name, n), func(w *worker) {
			for range r.cfg.Ops {
				depth := 1 + w.rng.IntN(3)
				switch x := w.rng.IntN(100); {
				case x < 55: // read, re-entered
					if !first(w, true) {
						holds(w, 0, 0, "a failed read acquisition")
						continue
					}
					for range depth - 1 {
						rw.RLock() // re-entry passes a queued writer
						w.op(pRWMonitor)
					}
					holds(w, 0, depth, "read re-entry")
					g.read(w)
					for range depth {
						rw.RUnlock()
						w.op(pRWMonitor)
					}
				case x < 85: // write, re-entered, with a read hold inside
					if !first(w, false) {
						holds(w, 0, 0, "a failed write acquisition")
						continue
					}
					for range depth - 1 {
						rw.Lock()
						w.op(pRWMonitor)
					}
					inner := w.pct(50)
					if inner {
						rw.RLock()
						w.op(pRWMonitor)
					}
					holds(w, depth, map[bool]int{true: 1, false: 0}[inner], "write re-entry")
					g.write(w)
					if inner {
						rw.RUnlock()
						w.op(pRWMonitor)
					}
					for range depth {
						rw.Unlock()
						w.op(pRWMonitor)
					}
				case x < 95: // downgrade: Lock, RLock, Unlock leaves a reader
					rw.Lock()
					g.write(w)
					rw.RLock()
					rw.Unlock()
					w.ops[pRWMonitor] += 3
					holds(w, 0, 1, "downgrade")
					g.read(w)
					rw.RUnlock()
					w.op(pRWMonitor)
				default: // upgrade refused
					rw.RLock()
					w.expectPanic("read-to-write upgrade", monitor.ErrUpgrade, rw.Lock)
					if rw.TryLock() {
						w.anomalyf("TryLock by a reader succeeded")
						rw.Unlock()
					}
					holds(w, 0, 1, "a refused upgrade")
					rw.RUnlock()
					w.ops[pRWMonitor] += 4
				}
				holds(w, 0, 0, "the last release")
			}
		})
	}
	r.atEnd(func() { g.check(r, rw.Locked(), rw.Readers()) })
}
