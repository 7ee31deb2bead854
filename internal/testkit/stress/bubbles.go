package stress

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// bubbleSharing runs when Config.Bubble is set: one Mutex, one Monitor, a
// Cond on the Mutex, one RWMutex and one RWMonitor are used at the same
// time by goroutines outside any bubble and by the goroutines of two
// testing/synctest bubbles. Go kills the program if a goroutine durably
// blocked in a bubble is woken from outside it; the locks must never let
// that happen, must keep mutual exclusion (writers against writers and
// readers) and hold counts, and the Cond must lose no wakeup (a token
// turnstile: every return of a token signals, so the workload finishes).
func (r *round) bubbleSharing() {
	if r.cfg.Bubble == nil {
		return
	}
	var (
		m       mutex.Mutex
		mon     monitor.Monitor
		c       = condvar.New(&m)
		counter int // guarded by m
		monN    int // guarded by mon
		tokens  = 2 // guarded by m
		want    atomic.Int64
		monWant atomic.Int64
		rwm     mutex.RWMutex
		rwmon   monitor.RWMonitor
		rwN     int          // guarded by rwm's and rwmon's write sides, one at a time
		rwIn    atomic.Int32 // writers in an RW write section
		rwWant  atomic.Int64
	)
	const name = "bubble sharing"
	// Everyone starts once all have arrived, so that the sides overlap.
	// The gate is a channel made outside any bubble: all may wait on it.
	gate := make(chan struct{})
	var arrived atomic.Int32
	all := int32(3 * r.cfg.Goroutines)
	body := func(w *worker, seed uint64) {
		if arrived.Add(1) == all {
			close(gate)
		}
		<-gate
		rng := rand.New(rand.NewPCG(seed, 0))
		var n, monNLocal, rwNLocal int64
		var ops [numPrims]int64
		// write and read check the RW locks' exclusion: rwN is written by
		// writers of both locks, so a write holds both.
		write := func() {
			if rwIn.Add(1) != 1 {
				w.anomalyf("two writers in an RW lock's write section")
			}
			rwN++
			rwNLocal++
			rwIn.Add(-1)
		}
		read := func() {
			if rwIn.Load() != 0 {
				w.anomalyf("a reader in an RW lock beside a writer")
			}
		}
		for range r.cfg.Ops {
			switch rng.IntN(6) {
			case 0:
				m.Lock()
				counter++
				m.Unlock()
				n++
				ops[pMutex] += 2
			case 1:
				ctx, cancel := context.WithCancel(context.Background())
				if rng.IntN(2) == 0 {
					go cancel() // sometimes while the goroutine waits
				}
				if m.LockContext(ctx) == nil {
					counter++
					m.Unlock()
					n++
					ops[pMutex]++
				}
				cancel()
				ops[pMutex]++
			case 2:
				mon.Lock()
				mon.Lock()
				if h := mon.HoldCount(); h != 2 {
					w.anomalyf("hold count %d after two Locks", h)
				}
				monN++
				mon.Unlock()
				mon.Unlock()
				monNLocal++
				ops[pMonitor] += 5
			case 3:
				m.Lock()
				for tokens == 0 {
					c.Wait()
					ops[pCondMutex]++
				}
				tokens--
				m.Unlock()
				m.Lock()
				tokens++
				c.Signal()
				m.Unlock()
				ops[pCondMutex]++
				ops[pMutex] += 4
			case 4:
				switch rng.IntN(3) {
				case 0:
					rwm.RLock()
					rwmon.RLock()
					rwmon.RLock()
					read()
					rwmon.RUnlock()
					rwmon.RUnlock()
					rwm.RUnlock()
					ops[pRWMutex] += 2
					ops[pRWMonitor] += 4
				case 1:
					ctx, cancel := context.WithCancel(context.Background())
					if rng.IntN(2) == 0 {
						go cancel()
					}
					if rwm.RLockContext(ctx) == nil {
						read()
						rwm.RUnlock()
						ops[pRWMutex]++
					}
					cancel()
					ops[pRWMutex]++
				default:
					if rwmon.TryRLock() {
						read()
						rwmon.RUnlock()
						ops[pRWMonitor]++
					}
					ops[pRWMonitor]++
				}
			default:
				// The write sides, in one order (rwm, then rwmon) so that
				// writers cannot deadlock each other.
				ctx, cancel := context.WithCancel(context.Background())
				if rng.IntN(2) == 0 {
					go cancel()
				}
				if rwm.LockContext(ctx) == nil {
					rwmon.Lock()
					rwmon.Lock()
					if h := rwmon.WriteHoldCount(); h != 2 {
						w.anomalyf("rwmonitor write hold count %d after two Locks", h)
					}
					write()
					rwmon.Unlock()
					rwmon.Unlock()
					rwm.Unlock()
					ops[pRWMutex]++
					ops[pRWMonitor] += 4
				}
				cancel()
				ops[pRWMutex]++
			}
		}
		want.Add(n)
		monWant.Add(monNLocal)
		rwWant.Add(rwNLocal)
		for i, k := range ops {
			r.ops[i].Add(k)
		}
	}
	for g := range r.cfg.Goroutines {
		r.spawn(fmt.Sprintf("%s outside #%d", name, g), func(w *worker) { body(w, w.rng.Uint64()) })
	}
	for b := range 2 {
		r.spawn(fmt.Sprintf("%s bubble #%d", name, b), func(w *worker) {
			seed := w.rng.Uint64()
			r.cfg.Bubble(func() {
				var wg sync.WaitGroup
				for g := range r.cfg.Goroutines {
					wg.Add(1)
					go func() {
						defer wg.Done()
						body(w, seed+uint64(g))
					}()
				}
				wg.Wait()
			})
		})
	}
	r.atEnd(func() {
		if int64(counter) != want.Load() || int64(monN) != monWant.Load() {
			r.an.addf("%s (round %d): mutex counter %d for %d increments, monitor counter %d for %d",
				name, r.n+1, counter, want.Load(), monN, monWant.Load())
		}
		if int64(rwN) != rwWant.Load() {
			r.an.addf("%s (round %d): rw counter %d for %d increments", name, r.n+1, rwN, rwWant.Load())
		}
		if rwm.Locked() || rwm.Readers() != 0 || rwmon.Locked() || rwmon.Readers() != 0 {
			r.an.addf("%s (round %d): rwmutex locked %v with %d readers, rwmonitor locked %v with %d readers at the end",
				name, r.n+1, rwm.Locked(), rwm.Readers(), rwmon.Locked(), rwmon.Readers())
		}
		if tokens != 2 || c.Waiters() != 0 || m.Locked() || mon.Locked() {
			r.an.addf("%s (round %d): %d tokens, %d waiters, mutex locked %v, monitor locked %v at the end",
				name, r.n+1, tokens, c.Waiters(), m.Locked(), mon.Locked())
		}
	})
}
